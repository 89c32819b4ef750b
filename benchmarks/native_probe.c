/* Prices of the per-op work of our passes when done natively, through MLIR's C API.
 *
 * Built and driven by benchmarks/native_probe.py (read its docstring first). jaxlib
 * exports no MLIR C API, but its one native library holds the C API functions as local
 * symbols; the Python side finds their addresses in the library's symbol table and
 * passes them here in `struct Api`, so this file includes no MLIR header and links
 * against nothing. The declarations below restate the C API's types (mlir-c/IR.h):
 * every handle is a struct holding one pointer.
 *
 * All times are process CPU seconds (clock_gettime(CLOCK_PROCESS_CPUTIME_ID)).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { void *ptr; } MlirOperation;
typedef struct { void *ptr; } MlirIdentifier;
typedef struct { void *ptr; } MlirValue;
typedef struct { void *ptr; } MlirType;
typedef struct { void *ptr; } MlirLocation;
typedef struct { void *ptr; } MlirBlock;
typedef struct { void *ptr; } MlirRegion;
typedef struct { void *ptr; } MlirAttribute;
typedef struct { void *ptr; } MlirContext;
typedef struct { const char *data; size_t length; } MlirStringRef;
typedef struct { MlirIdentifier name; MlirAttribute attribute; } MlirNamedAttribute;
typedef struct {
  MlirStringRef name;
  MlirLocation location;
  intptr_t nResults;
  MlirType *results;
  intptr_t nOperands;
  MlirValue *operands;
  intptr_t nRegions;
  MlirRegion *regions;
  intptr_t nSuccessors;
  MlirBlock *successors;
  intptr_t nAttributes;
  MlirNamedAttribute *attributes;
  bool enableResultTypeInference;
} MlirOperationState;

typedef int MlirWalkResult; /* 0 = advance */
typedef MlirWalkResult (*WalkCallback)(MlirOperation, void *);

/* The C API functions used, in the order native_probe.py's API_FUNCTIONS lists them. */
struct Api {
  void (*walk)(MlirOperation, WalkCallback, void *, int);
  MlirIdentifier (*get_name)(MlirOperation);
  MlirStringRef (*identifier_str)(MlirIdentifier);
  intptr_t (*num_results)(MlirOperation);
  MlirValue (*get_result)(MlirOperation, intptr_t);
  MlirType (*value_type)(MlirValue);
  bool (*is_ranked_tensor)(MlirType);
  bool (*has_static_shape)(MlirType);
  int64_t (*rank)(MlirType);
  int64_t (*dim)(MlirType, intptr_t);
  intptr_t (*num_operands)(MlirOperation);
  MlirValue (*get_operand)(MlirOperation, intptr_t);
  MlirLocation (*get_location)(MlirOperation);
  MlirBlock (*get_block)(MlirOperation);
  MlirOperationState (*state_get)(MlirStringRef, MlirLocation);
  void (*state_add_results)(MlirOperationState *, intptr_t, const MlirType *);
  void (*state_add_operands)(MlirOperationState *, intptr_t, const MlirValue *);
  MlirOperation (*create)(MlirOperationState *);
  void (*insert_before)(MlirBlock, MlirOperation, MlirOperation);
  void (*destroy)(MlirOperation);
  void (*replace_all_uses)(MlirValue, MlirValue);
  /* for the legacy broadcast rewrite */
  MlirContext (*get_context)(MlirOperation);
  MlirIdentifier (*identifier_get)(MlirContext, MlirStringRef);
  void (*state_add_attributes)(MlirOperationState *, intptr_t, const MlirNamedAttribute *);
  MlirAttribute (*get_attribute)(MlirOperation, MlirStringRef);
  intptr_t (*dense_array_size)(MlirAttribute);
  int64_t (*elements_size)(MlirAttribute);
  MlirAttribute (*dense_i64_array_get)(MlirContext, intptr_t, const int64_t *);
  MlirAttribute (*dense_elements_raw_get)(MlirType, size_t, const void *);
  MlirType (*ranked_tensor_get)(intptr_t, const int64_t *, MlirType, MlirAttribute);
  MlirType (*integer_type_get)(MlirContext, unsigned);
  MlirAttribute (*attribute_null)(void);
  bool (*value_is_op_result)(MlirValue);
  MlirOperation (*op_result_owner)(MlirValue);
};

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool name_is(MlirStringRef s, const char *name) {
  size_t n = strlen(name);
  return s.length == n && memcmp(s.data, name, n) == 0;
}

/* ------------------------------------------------------------------ walks */

struct WalkState {
  const struct Api *api;
  const char *prefix;             /* "stablehlo." */
  const char *const *effectful;   /* mnemonics, NULL-terminated (from Python) */
  long ops, zero_sized;
};

static MlirWalkResult count_op(MlirOperation op, void *data) {
  ((struct WalkState *)data)->ops++;
  (void)op;
  return 0;
}

/* RemoveDeadZeroSizedTensorOps' match, as penguin_rewriters.py states it: an op of the
 * dialect, not effectful (the rewriter's own list, passed in), with results, every result
 * a ranked tensor of static shape with a 0 dim. */
static MlirWalkResult scan_op(MlirOperation op, void *data) {
  struct WalkState *w = data;
  const struct Api *a = w->api;
  w->ops++;
  MlirStringRef name = a->identifier_str(a->get_name(op));
  size_t plen = strlen(w->prefix);
  if (name.length <= plen || memcmp(name.data, w->prefix, plen) != 0) return 0;
  intptr_t n = a->num_results(op);
  if (n == 0) return 0;
  for (intptr_t i = 0; i < n; i++) {
    MlirType t = a->value_type(a->get_result(op, i));
    if (!a->is_ranked_tensor(t) || !a->has_static_shape(t)) return 0;
    bool zero = false;
    for (int64_t d = 0, r = a->rank(t); d < r && !zero; d++) zero = a->dim(t, d) == 0;
    if (!zero) return 0;
  }
  MlirStringRef mnemonic = {name.data + plen, name.length - plen};
  for (const char *const *e = w->effectful; *e; e++)
    if (name_is(mnemonic, *e)) return 0;
  w->zero_sized++;
  return 0;
}

/* out: [ops, seconds] */
int probe_api_size(void) { return (int)(sizeof(struct Api) / sizeof(void *)); }

void probe_walk(const struct Api *api, void *root, double *out) {
  struct WalkState w = {api, "", NULL, 0, 0};
  MlirOperation op = {root};
  double t0 = cpu_seconds();
  api->walk(op, count_op, &w, 1 /* post-order */);
  out[0] = (double)w.ops;
  out[1] = cpu_seconds() - t0;
}

/* out: [ops, zero-sized matches, seconds] */
void probe_scan(const struct Api *api, void *root, const char *prefix,
                const char *const *effectful, double *out) {
  struct WalkState w = {api, prefix, effectful, 0, 0};
  MlirOperation op = {root};
  double t0 = cpu_seconds();
  api->walk(op, scan_op, &w, 1 /* post-order */);
  out[0] = (double)w.ops;
  out[1] = (double)w.zero_sized;
  out[2] = cpu_seconds() - t0;
}

/* ------------------------------------------------------------------ edits */

struct Collect {
  const struct Api *api;
  const char *name;
  MlirOperation *ops;
  long n, cap;
};

static MlirWalkResult collect_op(MlirOperation op, void *data) {
  struct Collect *c = data;
  if (!name_is(c->api->identifier_str(c->api->get_name(op)), c->name)) return 0;
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 1024;
    c->ops = realloc(c->ops, (size_t)c->cap * sizeof(MlirOperation));
  }
  c->ops[c->n++] = op;
  return 0;
}

/* The edit prices, in phases the Python side checks between (native_probe.py), on every
 * op named `name` (an elementwise op with two operands and one result):
 *   probe_edits_begin   collect them (returns how many, or -1 if one is not of that form);
 *   probe_edits_create  before each, create an op of the same name, operands, result type
 *                       and location (as the Python floor's create does);
 *   probe_edits_rauw    redirect the uses of each original's result to its copy's
 *                       (forward = 1), or back (forward = 0);
 *   probe_edits_destroy erase the copies (they have no uses then);
 *   probe_edits_end     free the lists.
 * The module is left as it was. Each phase writes its CPU seconds to out[0]. */
static struct Collect edits;
static MlirOperation *copies;

long probe_edits_begin(const struct Api *api, void *root, const char *name) {
  struct Collect c = {api, name, NULL, 0, 0};
  MlirOperation top = {root};
  api->walk(top, collect_op, &c, 1);
  edits = c;
  copies = calloc((size_t)(c.n ? c.n : 1), sizeof(MlirOperation));
  for (long i = 0; i < c.n; i++)
    if (api->num_operands(c.ops[i]) != 2 || api->num_results(c.ops[i]) != 1) return -1;
  return c.n;
}

void probe_edits_create(double *out) {
  const struct Api *api = edits.api;
  MlirStringRef sname = {edits.name, strlen(edits.name)};
  double t0 = cpu_seconds();
  for (long i = 0; i < edits.n; i++) {
    MlirOperation old = edits.ops[i];
    MlirValue operands[2] = {api->get_operand(old, 0), api->get_operand(old, 1)};
    MlirType type = api->value_type(api->get_result(old, 0));
    MlirOperationState state = api->state_get(sname, api->get_location(old));
    api->state_add_results(&state, 1, &type);
    api->state_add_operands(&state, 2, operands);
    copies[i] = api->create(&state);
    api->insert_before(api->get_block(old), old, copies[i]);
  }
  out[0] = cpu_seconds() - t0;
}

void probe_edits_rauw(int forward, double *out) {
  const struct Api *api = edits.api;
  double t0 = cpu_seconds();
  for (long i = 0; i < edits.n; i++) {
    MlirValue a = api->get_result(edits.ops[i], 0), b = api->get_result(copies[i], 0);
    if (forward)
      api->replace_all_uses(a, b);
    else
      api->replace_all_uses(b, a);
  }
  out[0] = cpu_seconds() - t0;
}

void probe_edits_destroy(double *out) {
  double t0 = cpu_seconds();
  for (long i = 0; i < edits.n; i++) edits.api->destroy(copies[i]);
  out[0] = cpu_seconds() - t0;
}

void probe_edits_end(void) {
  free(edits.ops);
  free(copies);
  edits.ops = NULL;
  copies = NULL;
}

/* ------------------------------------------------------------------ one whole rewrite */

/* ReplaceBroadcastsWithBroadcastInDim (penguin_rewriters.py) done natively on every
 * `<dialect>.broadcast` under `func`, in walk order: for a ranked operand and a static
 * result, a `<dialect>.broadcast_in_dim` of the same operand, result type and location
 * with broadcast_dimensions = [P, ..., P+R-1] (P = number of broadcast_sizes, R = the
 * operand's rank; StableHLO: array<i64: ..>, MHLO: dense<..> : tensor<Rxi64>), inserted
 * before it, its uses redirected, the broadcast erased. Like the Python rewriter it also
 * tells whether the operand is a constant (the remark), counted in out[2]: here "defined
 * by <dialect>.constant" (Python also wants its values readable; native_probe.py says
 * what follows).
 * out: [broadcasts found, rewritten, non-constant operands, collect s, rewrite s] */
void probe_legacy_broadcast(const struct Api *a, void *func, const char *dialect,
                            int array_attr, double *out) {
  char name[64], new_name[64], constant[64];
  snprintf(name, sizeof name, "%s.broadcast", dialect);
  snprintf(new_name, sizeof new_name, "%s.broadcast_in_dim", dialect);
  snprintf(constant, sizeof constant, "%s.constant", dialect);
  struct Collect c = {a, name, NULL, 0, 0};
  MlirOperation f = {func};
  double t0 = cpu_seconds();
  a->walk(f, collect_op, &c, 1);
  double t1 = cpu_seconds();
  MlirContext ctx = a->get_context(f);
  MlirStringRef sizes_name = {"broadcast_sizes", 15};
  MlirStringRef dims_name = {"broadcast_dimensions", 20};
  MlirStringRef sname = {new_name, strlen(new_name)};
  MlirIdentifier dims_id = a->identifier_get(ctx, dims_name);
  MlirType i64 = a->integer_type_get(ctx, 64);
  long rewritten = 0, remarks = 0;
  int64_t dims[64];
  for (long i = 0; i < c.n; i++) {
    MlirOperation op = c.ops[i];
    MlirValue operand = a->get_operand(op, 0);
    MlirType operand_type = a->value_type(operand);
    MlirType result_type = a->value_type(a->get_result(op, 0));
    if (!a->is_ranked_tensor(operand_type)) continue;
    if (!a->is_ranked_tensor(result_type) || !a->has_static_shape(result_type)) continue;
    if (!a->value_is_op_result(operand) ||
        !name_is(a->identifier_str(a->get_name(a->op_result_owner(operand))), constant))
      remarks++;
    MlirAttribute sizes = a->get_attribute(op, sizes_name);
    if (!sizes.ptr) continue; /* required by the verifier; guarded all the same */
    int64_t prefix = array_attr ? (int64_t)a->dense_array_size(sizes) : a->elements_size(sizes);
    int64_t rank = a->rank(operand_type);
    if (rank > 64) continue;
    for (int64_t k = 0; k < rank; k++) dims[k] = prefix + k;
    MlirAttribute attr;
    if (array_attr) {
      attr = a->dense_i64_array_get(ctx, (intptr_t)rank, dims);
    } else {
      MlirType t = a->ranked_tensor_get(1, &rank, i64, a->attribute_null());
      attr = a->dense_elements_raw_get(t, (size_t)rank * sizeof(int64_t), dims);
    }
    MlirNamedAttribute named = {dims_id, attr};
    MlirOperationState state = a->state_get(sname, a->get_location(op));
    a->state_add_results(&state, 1, &result_type);
    a->state_add_operands(&state, 1, &operand);
    a->state_add_attributes(&state, 1, &named);
    MlirOperation new_op = a->create(&state);
    a->insert_before(a->get_block(op), op, new_op);
    a->replace_all_uses(a->get_result(op, 0), a->get_result(new_op, 0));
    a->destroy(op);
    rewritten++;
  }
  double t2 = cpu_seconds();
  free(c.ops);
  out[0] = (double)c.n;
  out[1] = (double)rewritten;
  out[2] = (double)remarks;
  out[3] = t1 - t0;
  out[4] = t2 - t1;
}
