//===- FlashAttrs.td - flash attributes ---------------------*- tablegen -*-===//
#ifndef FLASHFUSE_DIALECT_FLASH_IR_FLASHATTRS_TD
#define FLASHFUSE_DIALECT_FLASH_IR_FLASHATTRS_TD

include "flashfuse/Dialect/Flash/IR/FlashDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

// Where the causal diagonal sits when Sq != Sk. Top-left: query i sees keys
// j <= i. Bottom-right: query i sees keys j <= i + (Sk - Sq), so the last
// query sees every key (the KV-cache convention of FlashAttention >= 2.1).
def Flash_CausalAlignment : I32EnumAttr<"CausalAlignment",
    "alignment of the causal diagonal", [
      I32EnumAttrCase<"TopLeft", 0, "top_left">,
      I32EnumAttrCase<"BottomRight", 1, "bottom_right">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::flash";
}
def Flash_CausalAttr : EnumAttr<Flash_Dialect, Flash_CausalAlignment, "causal"> {
  let assemblyFormat = "`<` $value `>`";
}

// A kernel recipe: one way of lowering the op to GPU code.
def Flash_Recipe : I32EnumAttr<"Recipe", "GPU kernel recipe", [
      I32EnumAttrCase<"Sm80", 0, "sm80">,
      I32EnumAttrCase<"Sm90", 1, "sm90">,
      I32EnumAttrCase<"Decode", 2, "decode">,
      // The Hopper forward with a producer warpgroup: Q/K/V tiles by TMA
      // on mbarrier pipelines, two consumer warpgroups on wgmma, register
      // reallocation (Sm90WsForward.cpp).
      I32EnumAttrCase<"Sm90Ws", 3, "sm90ws">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::flash";
}
def Flash_RecipeAttr : EnumAttr<Flash_Dialect, Flash_Recipe, "recipe"> {
  let assemblyFormat = "`<` $value `>`";
}

def Flash_TargetAttr : AttrDef<Flash_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "a GPU the kernels are generated for";
  let description = [{
    The hardware facts that decide tile sizes: the compute capability
    (`arch`, e.g. 90 for sm_90), the number of SMs, the shared memory one
    block may use (bytes), and the 32-bit registers per SM.
    Example: `#flash.target<name = "h100", arch = 90, sms = 132,
    smem_per_block = 232448, regs_per_sm = 65536>`.
  }];
  let parameters = (ins StringRefParameter<"short name">:$name,
                        "int64_t":$arch, "int64_t":$sms,
                        "int64_t":$smem_per_block, "int64_t":$regs_per_sm);
  let assemblyFormat = [{
    `<` `name` `=` $name `,` `arch` `=` $arch `,` `sms` `=` $sms `,`
    `smem_per_block` `=` $smem_per_block `,` `regs_per_sm` `=` $regs_per_sm `>`
  }];
  let genVerifyDecl = 1;
}

def Flash_KernelConfigAttr : AttrDef<Flash_Dialect, "KernelConfig"> {
  let mnemonic = "config";
  let summary = "the tiling a kernel recipe is instantiated with";
  let description = [{
    Chosen by `flash-select-config`: the recipe, the query rows per block
    (`block_m`), the keys per inner iteration (`block_n`), the warps per block
    and the depth of the K/V shared-memory pipeline (`stages`). The `decode`
    recipe (flash.attention_kvcache) also splits each sequence's keys
    between `splits` blocks whose partial results a combine kernel merges
    (1, the default, is printed as nothing). `block_m` is a multiple of 16,
    or 8 with the `decode` recipe: the block's packed query rows are then
    the n of the kernel's products instead of their m (docs/KVCACHE.md,
    "Few rows as the products' n").
  }];
  let parameters = (ins "Recipe":$recipe, "int64_t":$block_m,
                        "int64_t":$block_n, "int64_t":$warps,
                        "int64_t":$stages,
                        DefaultValuedParameter<"int64_t", "1">:$splits);
  let assemblyFormat = [{
    `<` $recipe `,` `block_m` `=` $block_m `,` `block_n` `=` $block_n `,`
    `warps` `=` $warps `,` `stages` `=` $stages (`,` `splits` `=` $splits^)? `>`
  }];
  let builders = [
    AttrBuilder<(ins "Recipe":$recipe, "int64_t":$block_m, "int64_t":$block_n,
                     "int64_t":$warps, "int64_t":$stages), [{
      return $_get($_ctxt, recipe, block_m, block_n, warps, stages, 1);
    }]>
  ];
  let genVerifyDecl = 1;
}

#endif // FLASHFUSE_DIALECT_FLASH_IR_FLASHATTRS_TD
