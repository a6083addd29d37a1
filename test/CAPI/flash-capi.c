/* The flash dialect's C API, from pure C: load the dialect through its
 * handle, parse and inspect a flash.attention, build one, run FlashFuse
 * passes through the pass-manager C API, and hand every entry point null
 * handles. The same file is built against the installed package by
 * scripts/test-install.sh.
 *
 * RUN: flashfuse-capi-test 2>&1 | FileCheck %s
 */
#include "flashfuse-c/Dialect/Flash.h"
#include "flashfuse-c/Passes.h"

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failed expectation ends the program with the line: FileCheck then fails
 * on the missing output, and the exit status fails the test on its own. */
#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stdout, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);      \
      fflush(stdout);                                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static void printString(MlirStringRef s, void *userData) {
  (void)userData;
  fwrite(s.data, 1, s.length, stdout);
}

/* Every diagnostic, on stdout in program order, so FileCheck sees the
 * verifier's messages between the lines that provoked them. */
static MlirLogicalResult printDiagnostic(MlirDiagnostic d, void *userData) {
  (void)userData;
  fputs("diagnostic: ", stdout);
  mlirDiagnosticPrint(d, printString, NULL);
  fputs("\n", stdout);
  return mlirLogicalResultSuccess();
}

static MlirStringRef str(const char *s) {
  return mlirStringRefCreateFromCString(s);
}

/* Walk callback: counts flash.attention ops and remembers the first. */
typedef struct {
  int count;
  MlirOperation first;
} Found;

static MlirWalkResult findAttention(MlirOperation op, void *userData) {
  Found *found = (Found *)userData;
  if (flashOperationIsAAttention(op)) {
    if (found->count++ == 0)
      found->first = op;
  }
  return MlirWalkResultAdvance;
}

static Found attentionOps(MlirOperation root) {
  Found found = {0, {NULL}};
  mlirOperationWalk(root, findAttention, &found, MlirWalkPreOrder);
  return found;
}

/* The named function's first block. */
static MlirBlock funcBody(MlirModule module, const char *name) {
  MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
  while (!mlirOperationIsNull(op)) {
    MlirAttribute sym =
        mlirOperationGetAttributeByName(op, str("sym_name"));
    if (!mlirAttributeIsNull(sym) &&
        mlirStringRefEqual(mlirStringAttrGetValue(sym), str(name)))
      return mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
    op = mlirOperationGetNextInBlock(op);
  }
  return (MlirBlock){NULL};
}

static void testNullHandles(void) {
  MlirOperation noOp = {NULL};
  MlirAttribute noAttr = {NULL};
  MlirContext noCtx = {NULL};
  MlirValue noValue = {NULL};
  FlashCausalAlignment alignment;
  FlashKernelConfig config;
  FlashTarget target;
  FlashAttentionSizes sizes;
  double d;
  int64_t i;

  EXPECT(!flashOperationIsAAttention(noOp));
  EXPECT(!flashOperationIsAAttentionGrad(noOp));
  EXPECT(!flashOperationIsAAttentionKVCache(noOp));
  EXPECT(!flashOperationIsAAttentionVariant(noOp));
  EXPECT(!flashAttributeIsACausal(noAttr));
  EXPECT(!flashAttributeIsAKernelConfig(noAttr));
  EXPECT(!flashAttributeIsATarget(noAttr));
  EXPECT(mlirAttributeIsNull(flashCausalAttrGet(noCtx, FlashCausalTopLeft)));
  config = (FlashKernelConfig){FlashRecipeSm80, 64, 64, 4, 2, 1};
  EXPECT(mlirAttributeIsNull(flashKernelConfigAttrGet(noCtx, config)));
  target = (FlashTarget){str("h100"), 90, 132, 232448, 65536};
  EXPECT(mlirAttributeIsNull(flashTargetAttrGet(noCtx, target)));
  EXPECT(mlirLogicalResultIsFailure(flashCausalAttrGetValue(noAttr, &alignment)));
  EXPECT(mlirLogicalResultIsFailure(flashKernelConfigAttrGetValue(noAttr, &config)));
  EXPECT(mlirLogicalResultIsFailure(flashTargetAttrGetValue(noAttr, &target)));
  EXPECT(mlirLogicalResultIsFailure(flashAttentionGetSizes(noOp, &sizes)));
  EXPECT(mlirLogicalResultIsFailure(flashAttentionGetEffectiveScale(noOp, &d)));
  EXPECT(mlirLogicalResultIsFailure(flashAttentionGetCausal(noOp, &alignment)));
  EXPECT(mlirLogicalResultIsFailure(flashAttentionGetWindowLeft(noOp, &i)));
  EXPECT(mlirLogicalResultIsFailure(flashAttentionGetWindowRight(noOp, &i)));
  EXPECT(mlirLogicalResultIsFailure(flashAttentionGetSoftcap(noOp, &d)));
  EXPECT(mlirLogicalResultIsFailure(flashAttentionGetDropoutP(noOp, &d)));
  EXPECT(mlirAttributeIsNull(flashAttentionGetKernelConfig(noOp)));
  EXPECT(mlirValueIsNull(flashAttentionGetBias(noOp)));
  EXPECT(mlirValueIsNull(flashAttentionGetMask(noOp)));
  EXPECT(mlirValueIsNull(flashAttentionGetSeed(noOp)));
  EXPECT(!flashAttentionHasScoreMod(noOp));
  EXPECT(!flashAttentionHasMaskMod(noOp));
  EXPECT(mlirOperationIsNull(flashAttentionCreate(
      (MlirLocation){NULL}, noValue, noValue, noValue, noValue,
      noValue, noValue, false, 0, NULL)));
  EXPECT(mlirLogicalResultIsFailure(
      flashfuseAddKernelsToPtxPipeline((MlirOpPassManager){NULL})));
  fputs("null handles: ok\n", stdout);
}
// CHECK: null handles: ok
// CHECK-NEXT: dialect: flash

static const char *kModule =
    "func.func @inspect(%q: tensor<2x8x128x64xf16>, %k: tensor<2x2x128x64xf16>,"
    "                   %v: tensor<2x2x128x64xf16>) -> tensor<2x8x128x64xf16> {\n"
    "  %o = flash.attention %q, %k, %v {causal = #flash.causal<bottom_right>,\n"
    "      window_left = 32 : i64, scale = 0.125 : f32}\n"
    "      : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>,\n"
    "        tensor<2x2x128x64xf16> -> tensor<2x8x128x64xf16>\n"
    "  return %o : tensor<2x8x128x64xf16>\n"
    "}\n"
    "func.func @build(%q: tensor<1x4x96x64xbf16>, %k: tensor<1x4x96x64xbf16>,"
    "                 %v: tensor<1x4x96x64xbf16>) -> tensor<1x4x96x64xbf16> {\n"
    "  return %q : tensor<1x4x96x64xbf16>\n"
    "}\n"
    "func.func @build_bshd(%q: tensor<1x96x4x64xf16>, %k: tensor<1x80x2x64xf16>,"
    "                      %v: tensor<1x80x2x32xf16>) {\n"
    "  return\n"
    "}\n";

static void testInspect(MlirOperation op) {
  FlashAttentionSizes s;
  FlashCausalAlignment alignment;
  double scale = 0, softcap = 0, dropout = -1;
  int64_t left = 0, right = 0;

  EXPECT(flashOperationIsAAttention(op));
  EXPECT(flashOperationIsAAttentionVariant(op));
  EXPECT(!flashOperationIsAAttentionGrad(op));
  EXPECT(mlirLogicalResultIsSuccess(flashAttentionGetSizes(op, &s)));
  printf("sizes: B=%lld Hq=%lld Hkv=%lld Sq=%lld Sk=%lld D=%lld Dv=%lld\n",
         (long long)s.batch, (long long)s.headsQ, (long long)s.headsKV,
         (long long)s.seqQ, (long long)s.seqK, (long long)s.headDim,
         (long long)s.headDimV);
  EXPECT(mlirLogicalResultIsSuccess(flashAttentionGetEffectiveScale(op, &scale)));
  EXPECT(mlirLogicalResultIsSuccess(flashAttentionGetCausal(op, &alignment)));
  EXPECT(mlirLogicalResultIsSuccess(flashAttentionGetWindowLeft(op, &left)));
  /* Absent attributes: failure, and the out value untouched. */
  EXPECT(mlirLogicalResultIsFailure(flashAttentionGetWindowRight(op, &right)));
  EXPECT(right == 0);
  EXPECT(mlirLogicalResultIsFailure(flashAttentionGetSoftcap(op, &softcap)));
  EXPECT(mlirLogicalResultIsSuccess(flashAttentionGetDropoutP(op, &dropout)));
  /* A null out pointer is a failure, not a crash. */
  EXPECT(mlirLogicalResultIsFailure(flashAttentionGetWindowLeft(op, NULL)));
  printf("scale=%g causal=%s window_left=%lld dropout_p=%g\n", scale,
         alignment == FlashCausalBottomRight ? "bottom_right" : "top_left",
         (long long)left, dropout);
  printf("config=%s bias=%s mask=%s seed=%s score_mod=%d mask_mod=%d\n",
         mlirAttributeIsNull(flashAttentionGetKernelConfig(op)) ? "none" : "set",
         mlirValueIsNull(flashAttentionGetBias(op)) ? "none" : "set",
         mlirValueIsNull(flashAttentionGetMask(op)) ? "none" : "set",
         mlirValueIsNull(flashAttentionGetSeed(op)) ? "none" : "set",
         flashAttentionHasScoreMod(op), flashAttentionHasMaskMod(op));
  /* An op of another dialect is not an attention: every accessor fails. */
  MlirOperation ret = mlirOperationGetNextInBlock(op);
  EXPECT(!flashOperationIsAAttentionVariant(ret));
  EXPECT(mlirLogicalResultIsFailure(flashAttentionGetSizes(ret, &s)));
  EXPECT(mlirLogicalResultIsFailure(flashAttentionGetCausal(ret, &alignment)));
}
// CHECK: sizes: B=2 Hq=8 Hkv=2 Sq=128 Sk=128 D=64 Dv=64
// CHECK-NEXT: scale=0.125 causal=bottom_right window_left=32 dropout_p=0
// CHECK-NEXT: config=none bias=none mask=none seed=none score_mod=0 mask_mod=0

static void testAttributes(MlirContext ctx) {
  FlashCausalAlignment alignment;
  MlirAttribute causal = flashCausalAttrGet(ctx, FlashCausalTopLeft);
  EXPECT(flashAttributeIsACausal(causal));
  EXPECT(!flashAttributeIsAKernelConfig(causal));
  EXPECT(mlirLogicalResultIsSuccess(flashCausalAttrGetValue(causal, &alignment)));
  EXPECT(alignment == FlashCausalTopLeft);
  EXPECT(mlirAttributeIsNull(flashCausalAttrGet(ctx, (FlashCausalAlignment)7)));
  mlirAttributePrint(causal, printString, NULL);
  fputs("\n", stdout);

  FlashKernelConfig config = {FlashRecipeSm90, 128, 64, 8, 2, 1}, back;
  MlirAttribute attr = flashKernelConfigAttrGet(ctx, config);
  EXPECT(flashAttributeIsAKernelConfig(attr));
  EXPECT(mlirLogicalResultIsSuccess(flashKernelConfigAttrGetValue(attr, &back)));
  EXPECT(memcmp(&config, &back, sizeof config) == 0);
  mlirAttributePrint(attr, printString, NULL);
  fputs("\n", stdout);
  /* The attribute's verifier rejects it, through the diagnostic handler. */
  config.blockM = 0;
  EXPECT(mlirAttributeIsNull(flashKernelConfigAttrGet(ctx, config)));

  FlashTarget target = {str("h100"), 90, 132, 232448, 65536}, t;
  MlirAttribute targetAttr = flashTargetAttrGet(ctx, target);
  EXPECT(flashAttributeIsATarget(targetAttr));
  EXPECT(mlirLogicalResultIsSuccess(flashTargetAttrGetValue(targetAttr, &t)));
  EXPECT(mlirStringRefEqual(t.name, str("h100")) && t.arch == 90 &&
         t.sms == 132 && t.smemPerBlock == 232448 && t.regsPerSm == 65536);
  mlirAttributePrint(targetAttr, printString, NULL);
  fputs("\n", stdout);
}
// CHECK: #flash.causal<top_left>
// CHECK-NEXT: #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 2>
// CHECK-NEXT: diagnostic: {{.*}}block_m
// CHECK-NEXT: #flash.target<name = "h100", arch = 90, sms = 132, smem_per_block = 232448, regs_per_sm = 65536>

static void testBuild(MlirContext ctx, MlirModule module) {
  MlirBlock body = funcBody(module, "build");
  EXPECT(!mlirBlockIsNull(body));
  MlirValue q = mlirBlockGetArgument(body, 0), k = mlirBlockGetArgument(body, 1),
            v = mlirBlockGetArgument(body, 2), none = {NULL};
  MlirLocation loc = mlirLocationUnknownGet(ctx);

  MlirNamedAttribute attrs[] = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("causal")),
                            flashCausalAttrGet(ctx, FlashCausalTopLeft)),
      mlirNamedAttributeGet(
          mlirIdentifierGet(ctx, str("softcap")),
          mlirFloatAttrDoubleGet(ctx, mlirF32TypeGet(ctx), 30.0)),
  };
  MlirOperation op =
      flashAttentionCreate(loc, q, k, v, none, none, none, true, 2, attrs);
  EXPECT(!mlirOperationIsNull(op));
  EXPECT(mlirOperationGetNumResults(op) == 2);
  MlirOperation ret = mlirBlockGetTerminator(body);
  mlirBlockInsertOwnedOperationBefore(body, ret, op);
  mlirOperationSetOperand(ret, 0, mlirOperationGetResult(op, 0));
  mlirOperationPrint(op, printString, NULL);
  fputs("\n", stdout);

  /* Wrong kinds and ill-formed variants come back null with the reason. */
  MlirNamedAttribute wrongKind[] = {mlirNamedAttributeGet(
      mlirIdentifierGet(ctx, str("causal")), mlirUnitAttrGet(ctx))};
  EXPECT(mlirOperationIsNull(
      flashAttentionCreate(loc, q, k, v, none, none, none, false, 1, wrongKind)));
  MlirNamedAttribute negative[] = {mlirNamedAttributeGet(
      mlirIdentifierGet(ctx, str("window_left")),
      mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), -1))};
  EXPECT(mlirOperationIsNull(
      flashAttentionCreate(loc, q, k, v, none, none, none, false, 1, negative)));
  /* A key of another rank. */
  EXPECT(mlirOperationIsNull(flashAttentionCreate(
      loc, q, mlirOperationGetResult(op, 1), v, none, none, none, false, 0,
      NULL)));

  /* BSHD operands through the perms: the output keeps the query's layout
   * with Dv in place of D, the LSE is [B, Hq, Sq]. */
  MlirBlock bshd = funcBody(module, "build_bshd");
  EXPECT(!mlirBlockIsNull(bshd));
  int64_t bshdPerm[] = {0, 2, 1, 3};
  MlirAttribute perm = mlirDenseI64ArrayGet(ctx, 4, bshdPerm);
  MlirNamedAttribute perms[] = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("q_perm")), perm),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("k_perm")), perm),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("v_perm")), perm),
  };
  MlirOperation bshdOp = flashAttentionCreate(
      loc, mlirBlockGetArgument(bshd, 0), mlirBlockGetArgument(bshd, 1),
      mlirBlockGetArgument(bshd, 2), none, none, none, true, 3, perms);
  EXPECT(!mlirOperationIsNull(bshdOp));
  mlirBlockInsertOwnedOperationBefore(bshd, mlirBlockGetTerminator(bshd),
                                      bshdOp);
  FlashAttentionSizes sz;
  EXPECT(mlirLogicalResultIsSuccess(flashAttentionGetSizes(bshdOp, &sz)));
  EXPECT(sz.headsQ == 4 && sz.headsKV == 2 && sz.seqQ == 96 && sz.seqK == 80 &&
         sz.headDim == 64 && sz.headDimV == 32);
  mlirTypePrint(mlirValueGetType(mlirOperationGetResult(bshdOp, 0)),
                printString, NULL);
  fputs(" ", stdout);
  mlirTypePrint(mlirValueGetType(mlirOperationGetResult(bshdOp, 1)),
                printString, NULL);
  fputs("\n", stdout);
  /* A perm that is not one. */
  int64_t badPerm[] = {0, 2, 2, 3};
  MlirNamedAttribute bad[] = {mlirNamedAttributeGet(
      mlirIdentifierGet(ctx, str("q_perm")),
      mlirDenseI64ArrayGet(ctx, 4, badPerm))};
  EXPECT(mlirOperationIsNull(flashAttentionCreate(
      loc, mlirBlockGetArgument(bshd, 0), mlirBlockGetArgument(bshd, 1),
      mlirBlockGetArgument(bshd, 2), none, none, none, false, 1, bad)));

  EXPECT(mlirOperationVerify(mlirModuleGetOperation(module)));
  fputs("built and verified\n", stdout);
}
// CHECK: flash.attention %arg0, %arg1, %arg2 {causal = #flash.causal<top_left>, softcap = 3.000000e+01 : f32} : tensor<1x4x96x64xbf16>, tensor<1x4x96x64xbf16>, tensor<1x4x96x64xbf16> -> tensor<1x4x96x64xbf16>, tensor<1x4x96xf32>
// CHECK-NEXT: diagnostic: flashAttentionCreate: attribute 'causal' has the wrong kind: unit
// CHECK-NEXT: diagnostic: 'flash.attention' op 'window_left' must be non-negative, got -1
// CHECK-NEXT: diagnostic: flashAttentionCreate: 'key' must be a ranked tensor of rank 4, got 'tensor<1x4x96xf32>'
// CHECK-NEXT: tensor<1x96x4x32xf16> tensor<1x4x96xf32>
// CHECK-NEXT: diagnostic: flashAttentionCreate: 'q_perm' must be a permutation of 0, 1, 2, 3
// CHECK-NEXT: built and verified

static void testPasses(MlirContext ctx, MlirModule module) {
  MlirOperation moduleOp = mlirModuleGetOperation(module);
  flashfuseRegisterPasses();
  flashfuseRegisterPasses(); /* a second call is harmless */

  /* By name, with options, through the global registry. */
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  EXPECT(mlirLogicalResultIsSuccess(mlirParsePassPipeline(
      opm, str("builtin.module(flash-select-config{target=h100})"),
      printString, NULL)));
  EXPECT(mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(pm, moduleOp)));
  mlirPassManagerDestroy(pm);
  Found found = attentionOps(moduleOp);
  EXPECT(found.count == 3);
  FlashKernelConfig config;
  EXPECT(mlirLogicalResultIsSuccess(flashKernelConfigAttrGetValue(
      flashAttentionGetKernelConfig(found.first), &config)));
  printf("selected: recipe=%d block_m=%lld block_n=%lld\n", (int)config.recipe,
         (long long)config.blockM, (long long)config.blockN);

  /* An unknown pass name is an error, not a crash. */
  pm = mlirPassManagerCreate(ctx);
  fputs("parse error: ", stdout);
  EXPECT(mlirLogicalResultIsFailure(mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      str("builtin.module(flash-no-such-pass)"), printString, NULL)));
  fputs("\n", stdout);
  mlirPassManagerDestroy(pm);

  /* A pass object from its generated constructor, nested on functions. */
  pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager funcPm =
      mlirPassManagerGetNestedUnder(pm, str("func.func"));
  mlirOpPassManagerAddOwnedPass(funcPm, mlirCreateFlashConversionFlashLowerNaive());
  EXPECT(mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(pm, moduleOp)));
  mlirPassManagerDestroy(pm);
  printf("after flash-lower-naive: %d flash.attention\n",
         attentionOps(moduleOp).count);
  EXPECT(mlirOperationVerify(moduleOp));
}
// CHECK: selected: recipe=1 block_m={{[0-9]+}} block_n={{[0-9]+}}
// CHECK: parse error: {{.*}}flash-no-such-pass
// CHECK: after flash-lower-naive: 0 flash.attention

int main(void) {
  testNullHandles();

  MlirContext ctx = mlirContextCreate();
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);
  /* func and tensor for the module; flash through its own handle. */
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  MlirDialectHandle flash = mlirGetDialectHandle__flash__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(flash);
  MlirDialect dialect = mlirDialectHandleLoadDialect(flash, ctx);
  EXPECT(!mlirDialectIsNull(dialect));
  printf("dialect: %.*s\n", (int)ns.length, ns.data);

  MlirModule module = mlirModuleCreateParse(ctx, str(kModule));
  EXPECT(!mlirModuleIsNull(module));
  Found found = attentionOps(mlirModuleGetOperation(module));
  EXPECT(found.count == 1);
  testInspect(found.first);
  testAttributes(ctx);
  testBuild(ctx, module);
  testPasses(ctx, module);

  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  fputs("done\n", stdout);
  return 0;
}
// CHECK: done
