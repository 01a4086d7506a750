#!/usr/bin/env bash
# ONNX in both directions (issue 28):
#  * export: an MLP (standardized features, normalizing_const) and a CNN (HWC images, batch
#    normalization, pooling) trained here, exported by hopper.export_onnx and run by ONNX Runtime
#    (npm's onnxruntime-node, CPU), predict what hopper.predict_proba predicts: the same class for
#    every row, probabilities within 1e-5; so does a model trained on a table's own columns through
#    a feature recipe, fed the raw columns by name (against hopper.predict);
#  * import: PyTorch models (an MLP and a CNN on NCHW images) exported by torch.onnx.export and
#    imported by hopper.import_onnx predict what PyTorch predicts (hopper's rows channels-last),
#    serve as the start of fit (warm_start_checkpoint) and fit_multiple (model_arch_table weights),
#    and register as model versions that export again.
# onnxruntime-node is installed (npm install --ignore-scripts: its install script fetches optional GPU
# files) into $HOPPER_ONNXRUNTIME_DIR (default ~/.cache/hopper-onnxruntime); the test skips, saying
# why, only when node/npm are missing or the package cannot be installed, and skips the import half
# when python3 cannot import torch (Debian's python3-torch). Needs PGHOST/PGPORT/PGUSER of a cluster
# with hopper installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
DB=hopper_onnx
export PGDATABASE=$DB
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
WORK=$(mktemp -d /tmp/hopper-onnx.XXXXXX)
psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
cleanup() {
  local rc=$?
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT

ORT_DIR=${HOPPER_ONNXRUNTIME_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hopper-onnxruntime}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "onnx_roundtrip.sh: SKIP: node and npm are not installed (Debian: apt-get install nodejs npm)"
  exit 0
fi
if [ ! -d "$ORT_DIR/node_modules/onnxruntime-node" ]; then
  mkdir -p "$ORT_DIR"
  if ! npm install --prefix "$ORT_DIR" --ignore-scripts --no-audit --no-fund onnxruntime-node >"$WORK/npm.log" 2>&1; then
    echo "onnx_roundtrip.sh: SKIP: npm could not install onnxruntime-node:"
    tail -5 "$WORK/npm.log"
    exit 0
  fi
fi
export NODE_PATH=$ORT_DIR/node_modules
node -e "require('onnxruntime-node')" || { echo "FAIL: onnxruntime-node is installed in $ORT_DIR but does not load" >&2; exit 1; }

FAILURES=0
fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }

# compare NAME A.json B.json TOLERANCE: same argmax per row, every value within TOLERANCE.
compare() {
  local out rc=0
  out=$(node -e '
    const [a, b, tol] = [require(process.argv[1]), require(process.argv[2]), Number(process.argv[3])];
    if (a.length !== b.length || a.length === 0) { console.log(`rows ${a.length} vs ${b.length}`); process.exit(1); }
    const argmax = (x) => x.indexOf(Math.max(...x));
    let worst = 0, classes = 0;
    for (let i = 0; i < a.length; ++i) {
      if (a[i].length !== b[i].length) { console.log(`row ${i + 1}: ${a[i].length} vs ${b[i].length} outputs`); process.exit(1); }
      for (let j = 0; j < a[i].length; ++j) worst = Math.max(worst, Math.abs(a[i][j] - b[i][j]));
      if (argmax(a[i]) !== argmax(b[i])) ++classes;
    }
    console.log(`${a.length} rows, ${classes} class differences, largest difference ${worst.toExponential(2)}`);
    process.exit(classes === 0 && worst <= tol ? 0 : 1);' "$2" "$3" "$4") || rc=$?
  if [ $rc -eq 0 ]; then echo "ok: $1: $out"; else fail "$1: $out"; fi
}

# bytea_to_file SQL FILE: writes the bytea the query returns.
bytea_to_file() { psql_q -c "SELECT pg_catalog.encode(($1), 'base64')" | base64 -d >"$2"; }

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null
psql -X -q -d postgres -c "CREATE DATABASE $DB" >/dev/null
psql_q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
-- Three classes of 4 features on different scales (standardize and normalizing_const both matter).
CREATE TABLE pts AS
SELECT g AS id, ARRAY[10 * (g % 3) + 3 * sin(g), 50 + 20 * cos(g * 1.7) + (g % 3) * 15,
                      (g % 3) - 2 * sin(g * 0.3), 100 * cos(g)]::float8[] AS x,
       (ARRAY['setosa', 'versicolor', 'virginica'])[g % 3 + 1] AS label
FROM generate_series(1, 300) g;
SELECT hopper.preprocess('pts', 'pts_packed', 'label', 'x', buffer_size => 50, normalizing_const => 2,
                         scale => 'standardize', seed => 1);
CALL hopper.fit('pts_packed', 'mlp_out', '{"input_dim": 4, "layers": [
    {"units": 16, "activation": "relu", "dropout": 0.1}, {"type": "batch_normalization"},
    {"units": 8, "activation": "tanh"}, {"units": 3, "activation": "softmax"}]}',
  $$optimizer='Adam(lr=0.01)'$$, 'batch_size=25', 5, name => 'onnx mlp');
SELECT hopper.create_model('onnx_mlp');
SELECT hopper.register_model_version('onnx_mlp', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx mlp'));

-- 6x6 images of 2 channels (HWC rows), three classes: a bright quadrant per class.
CREATE TABLE imgs AS
SELECT g AS id,
       ARRAY(SELECT CASE WHEN (g % 3 = 0 AND y < 3 AND x < 3) OR (g % 3 = 1 AND y >= 3 AND x >= 3)
                              OR (g % 3 = 2 AND y < 3 AND x >= 3)
                         THEN 200 + 40 * sin(g + c) ELSE 60 + 50 * cos(g * 0.7 + y + x + c) END
             FROM generate_series(0, 5) y, generate_series(0, 5) x, generate_series(0, 1) c
             ORDER BY y, x, c)::float8[] AS x,
       (g % 3)::text AS label
FROM generate_series(1, 240) g;
SELECT hopper.preprocess('imgs', 'imgs_packed', 'label', 'x', buffer_size => 40, normalizing_const => 255, seed => 1);
CALL hopper.fit('imgs_packed', 'cnn_out', '{"input_shape": [6, 6, 2], "layers": [
    {"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "same", "activation": "relu"},
    {"type": "batch_normalization"},
    {"type": "max_pooling2d", "pool_size": 2},
    {"type": "conv2d", "filters": 6, "kernel_size": 2, "activation": "tanh"},
    {"type": "average_pooling2d", "pool_size": 2, "strides": 1, "padding": "same"},
    {"type": "flatten", "dropout": 0.1},
    {"units": 3, "activation": "softmax"}]}',
  $$optimizer='Adam(lr=0.01)'$$, 'batch_size=20', 4, name => 'onnx cnn');
SELECT hopper.create_model('onnx_cnn');
SELECT hopper.register_model_version('onnx_cnn', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx cnn'));
SQL

# ---- export: ONNX Runtime against hopper.predict_proba ----------------------------------------------
for m in mlp cnn; do
  src=$([ $m = mlp ] && echo pts || echo imgs)
  bytea_to_file "hopper.export_onnx('onnx_$m')" "$WORK/$m.onnx"
  psql_q -c "SELECT json_agg(x ORDER BY id) FROM $src" >"$WORK/$m.rows.json"
  psql_q -c "SELECT json_agg(hopper.predict_proba('onnx_$m', x) ORDER BY id) FROM $src" >"$WORK/$m.hopper.json"
  node test/onnx/run_onnx.js "$WORK/$m.onnx" "$WORK/$m.rows.json" >"$WORK/$m.ort.json"
  compare "export $m: ONNX Runtime vs hopper.predict_proba" "$WORK/$m.ort.json" "$WORK/$m.hopper.json" 1e-5
done
# By checkpoint uuid: the same bytes as by name; class names in the metadata.
uuid=$(psql_q -c "SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx mlp'")
bytea_to_file "hopper.export_onnx('$uuid'::uuid)" "$WORK/mlp_uuid.onnx"
if cmp -s "$WORK/mlp_uuid.onnx" "$WORK/mlp.onnx"; then fail "export by uuid gave the bytes of export by name (graph name and source differ)"; fi
node test/onnx/run_onnx.js "$WORK/mlp_uuid.onnx" "$WORK/mlp.rows.json" >"$WORK/mlp_uuid.ort.json"
compare "export by checkpoint uuid" "$WORK/mlp_uuid.ort.json" "$WORK/mlp.hopper.json" 1e-5
grep -q '\["setosa","versicolor","virginica"\]' "$WORK/mlp.onnx" && echo "ok: class names in metadata_props" ||
  fail "class_values metadata missing from the exported MLP"

# A model trained on a table's own columns: the raw columns go in by name (NULL as NaN or "", an unseen
# category, dates as days since 1970-01-01), encoded in the graph as the recipe encodes them; against
# hopper.predict's probabilities over the same rows.
psql_q >/dev/null <<'SQL'
CREATE TABLE tab AS
SELECT g AS id, CASE WHEN g % 7 = 0 THEN NULL ELSE (g % 2) * 3.0 + sin(g) END AS a,
       CASE WHEN g % 3 = 0 THEN 'x' WHEN g % 5 = 0 THEN NULL WHEN g % 11 = 0 THEN 'rare' ELSE 'y' END AS b,
       CASE WHEN g % 13 = 0 THEN NULL ELSE g % 2 = 0 END AS c, date '2020-01-01' + g AS d, 10 * sin(g * 0.1) AS e,
       CASE g % 2 WHEN 0 THEN 'even' ELSE 'odd' END AS label
FROM generate_series(1, 200) g;
SELECT hopper.preprocess('tab', 'tab_packed', 'label', '*', exclude_columns => 'id', buffer_size => 40, seed => 1,
  columns => '{"a": {"impute": "median", "scale": "standardize", "missing_indicator": true}, "b": {"min_frequency": 10},
               "d": {"scale": "minmax"}}');
CALL hopper.fit('tab_packed', 'tab_out', '{"input_dim": 10, "layers": [{"units": 8, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.05)'$$, 'batch_size=20', 3, name => 'onnx tab');
INSERT INTO tab VALUES (1000, 2.5, 'never seen', NULL, NULL, NULL, 'odd');
SELECT hopper.predict('tab_out', 'tab', 'id', '*', 'tab_pred', 'prob');
SQL
bytea_to_file "hopper.export_onnx((SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx tab'))" "$WORK/tab.onnx"
psql_q -c "SELECT json_build_object('a', json_agg(a ORDER BY id), 'b', json_agg(b ORDER BY id), 'c', json_agg(c::int ORDER BY id),
                                    'd', json_agg(d - date '1970-01-01' ORDER BY id), 'e', json_agg(e ORDER BY id)) FROM tab" >"$WORK/tab.columns.json"
psql_q -c "SELECT json_agg(prob ORDER BY id) FROM tab_pred" >"$WORK/tab.hopper.json"
node test/onnx/run_onnx.js "$WORK/tab.onnx" "$WORK/tab.columns.json" >"$WORK/tab.ort.json"
compare "export of a recipe model (raw columns): ONNX Runtime vs hopper.predict" "$WORK/tab.ort.json" "$WORK/tab.hopper.json" 1e-5

# A char(n) category: the recipe's categories are trimmed (::text), to_jsonb and drivers hand the values
# blank-padded; the graph scores both forms as hopper.predict does (padded, they were <unknown>).
psql_q >/dev/null <<'SQL'
CREATE TABLE chars AS
SELECT g AS id, (ARRAY['ab', 'abcd', 'é', 'x y'])[g % 4 + 1]::char(5) AS k, sin(g) AS v,
       CASE WHEN g % 4 < 2 THEN 'low' ELSE 'high' END AS label
FROM generate_series(1, 120) g;
SELECT hopper.preprocess('chars', 'chars_packed', 'label', '*', exclude_columns => 'id', buffer_size => 30, seed => 1);
CALL hopper.fit('chars_packed', 'chars_out', '{"layers": [{"units": 2, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.1)'$$, 'batch_size=10', 3, name => 'onnx chars');
SELECT hopper.predict('chars_out', 'chars', 'id', '*', 'chars_pred', 'prob');
SQL
bytea_to_file "hopper.export_onnx((SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx chars'))" "$WORK/chars.onnx"
psql_q -c "SELECT json_agg(prob ORDER BY id) FROM chars_pred" >"$WORK/chars.hopper.json"
for form in padded trimmed; do
  k=$([ $form = padded ] && echo 'to_jsonb(k)' || echo 'k::text')
  psql_q -c "SELECT json_build_object('k', json_agg($k ORDER BY id), 'v', json_agg(v ORDER BY id)) FROM chars" >"$WORK/chars.$form.json"
  node test/onnx/run_onnx.js "$WORK/chars.onnx" "$WORK/chars.$form.json" >"$WORK/chars.$form.ort.json"
  compare "export of a char(5) category fed $form: ONNX Runtime vs hopper.predict" "$WORK/chars.$form.ort.json" "$WORK/chars.hopper.json" 1e-5
done

# Embeddings of a categorical column packed as one code (Gather) and packed one-hot (MatMul), with
# input_dim and the vocabulary left out: the same rows, ONNX Runtime against hopper.predict.
psql_q >/dev/null <<'SQL'
SELECT hopper.preprocess('tab', 'tab_codes', 'label', '*', exclude_columns => 'id', buffer_size => 40, seed => 1,
  columns => '{"b": {"encoding": "codes"}}');
CALL hopper.fit('tab_codes', 'tab_emb_codes', '{"layers": [{"type": "embedding", "column": "b", "output_dim": 3},
                {"units": 8, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.05)'$$, 'batch_size=20', 3, name => 'onnx emb codes');
CALL hopper.fit('tab_packed', 'tab_emb_onehot', '{"layers": [{"type": "embedding", "column": "b", "output_dim": 3},
                {"units": 8, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.05)'$$, 'batch_size=20', 3, name => 'onnx emb onehot');
SELECT hopper.predict('tab_emb_codes', 'tab', 'id', '*', 'tab_emb_codes_pred', 'prob');
SELECT hopper.predict('tab_emb_onehot', 'tab', 'id', '*', 'tab_emb_onehot_pred', 'prob');
SQL
for m in codes onehot; do
  bytea_to_file "hopper.export_onnx((SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx emb $m'))" "$WORK/emb_$m.onnx"
  psql_q -c "SELECT json_agg(prob ORDER BY id) FROM tab_emb_${m}_pred" >"$WORK/emb_$m.hopper.json"
  node test/onnx/run_onnx.js "$WORK/emb_$m.onnx" "$WORK/tab.columns.json" >"$WORK/emb_$m.ort.json"
  compare "export of an embedding ($m): ONNX Runtime vs hopper.predict" "$WORK/emb_$m.ort.json" "$WORK/emb_$m.hopper.json" 1e-5
done

# A regressor whose target (around 1e5) was standardized for training: the graph ends with a Mul by
# the target's deviation and an Add of its mean, and gives what hopper.predict_value gives, in the
# target's own units (within 0.2, 2e-6 of the values: float32 keeps 7 digits of numbers around 1e5).
psql_q >/dev/null <<'SQL'
CREATE TABLE sal AS
SELECT g AS id, ARRAY[g % 9, (g * 7) % 5, g % 2]::float8[] AS x,
       80000 + 6000 * (g % 9) + 9000 * ((g * 7) % 5) + 5000 * (g % 2) + ((g * 7919) % 2001 - 1000) * 4 AS salary
FROM generate_series(1, 300) g;
SELECT hopper.preprocess('sal', 'sal_packed', 'salary', 'x', buffer_size => 50, seed => 1, response_type => 'regression');
CALL hopper.fit('sal_packed', 'sal_out', '{"layers": [{"units": 8, "activation": "relu"}, {"units": 1}]}',
                $$optimizer='Adam(lr=0.01)'$$, 'batch_size=20', 3, name => 'onnx sal');
SELECT hopper.create_model('onnx_sal');
SELECT hopper.register_model_version('onnx_sal', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx sal'));
SQL
bytea_to_file "hopper.export_onnx('onnx_sal')" "$WORK/sal.onnx"
psql_q -c "SELECT json_agg(x ORDER BY id) FROM sal" >"$WORK/sal.rows.json"
psql_q -c "SELECT json_agg(hopper.predict_value('onnx_sal', x) ORDER BY id) FROM sal" >"$WORK/sal.hopper.json"
if [ "$(psql_q -c "SELECT min((hopper.predict_value('onnx_sal', x))[1]) > 50000 FROM sal")" = t ]; then
  echo "ok: the standardized regressor predicts in the target's own units"
else
  fail "the standardized regressor's predictions are not in the target's units"
fi
node test/onnx/run_onnx.js "$WORK/sal.onnx" "$WORK/sal.rows.json" >"$WORK/sal.ort.json"
compare "export of a regressor with a standardized target: ONNX Runtime vs hopper.predict_value" \
  "$WORK/sal.ort.json" "$WORK/sal.hopper.json" 0.2

# ---- import: PyTorch's models ------------------------------------------------------------------------
if ! /usr/bin/env python3 -c "import torch" 2>/dev/null && ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "onnx_roundtrip.sh: import half SKIPPED: python3 cannot import torch (Debian: apt-get install python3-torch)"
else
  PY=python3
  python3 -c "import torch" 2>/dev/null || PY=/usr/bin/python3
  for m in mlp cnn; do
    "$PY" test/onnx/torch_model.py $m "$WORK/torch_$m.onnx" "$WORK/torch_$m.rows.json" "$WORK/torch_$m.pred.json"
    id=$(psql_q -c "SELECT hopper.import_onnx('torch_arch', pg_catalog.decode('$(base64 -w0 "$WORK/torch_$m.onnx")', 'base64'), 'torch $m')")
    # The rows (one JSON document, read client-side) as hopper rows.
    psql_q -c "CREATE TABLE torch_${m}_doc (doc json)"
    psql_q -c "\\copy torch_${m}_doc FROM '$WORK/torch_$m.rows.json'"
    psql_q -c "CREATE TABLE torch_${m}_rows AS SELECT i AS id, ARRAY(SELECT pg_catalog.json_array_elements_text(v)::float8) AS x,
                 ((i % 3))::text AS label
               FROM torch_${m}_doc, pg_catalog.json_array_elements(doc) WITH ORDINALITY t(v, i)"
    psql_q -c "SELECT json_agg(hopper.model_forward(a.model_weights, r.x) ORDER BY r.id)
               FROM torch_arch a, torch_${m}_rows r WHERE a.model_id = $id" >"$WORK/torch_$m.hopper.json"
    compare "import torch $m: hopper.model_forward vs PyTorch" "$WORK/torch_$m.hopper.json" "$WORK/torch_$m.pred.json" 1e-5
  done
  # The imported CNN: a start for fit (warm_start_checkpoint), fit_multiple (the arch table's weights)
  # and a registered version. With a learning rate of 1e-12 and the batch normalization frozen (its
  # moving statistics would follow the batches otherwise) the trained model is the imported one.
  psql_q -c "UPDATE torch_arch SET model_arch = pg_catalog.jsonb_set(model_arch, '{layers,2,trainable}', 'false')
             WHERE name = 'torch cnn' AND model_arch #>> '{layers,2,type}' = 'batch_normalization'"
  start=$(psql_q -c "SELECT hopper.create_checkpoint(model_weights) FROM torch_arch WHERE name = 'torch cnn'")
  arch=$(psql_q -c "SELECT model_arch FROM torch_arch WHERE name = 'torch cnn'")
  psql_q >/dev/null <<SQL
SELECT hopper.preprocess('torch_cnn_rows', 'torch_imgs_packed', 'label', 'x', buffer_size => 20, seed => 1);
CALL hopper.fit('torch_imgs_packed', 'torch_fit', '$arch', \$\$optimizer='SGD(lr=1e-12)'\$\$, 'batch_size=20', 1,
                name => 'torch warm', warm_start_checkpoint => '$start');
SELECT hopper.load_model_selection_table('torch_arch', 'torch_mst', ARRAY[(SELECT model_id FROM torch_arch WHERE name = 'torch cnn')],
                                         ARRAY[\$\$optimizer='SGD(lr=1e-12)'\$\$], ARRAY['batch_size=20']);
CALL hopper.fit_multiple('torch_imgs_packed', 'torch_fitm', 'torch_mst', 1);
SELECT hopper.create_model('torch_cnn');
SELECT hopper.register_model_version('torch_cnn', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'torch warm'));
SQL
  for t in torch_fit torch_fitm; do
    psql_q -c "SELECT json_agg(hopper.model_forward((SELECT model_state FROM $t LIMIT 1), x) ORDER BY id) FROM torch_cnn_rows" \
      >"$WORK/$t.json"
    compare "import torch cnn: $t started from the imported weights" "$WORK/$t.json" "$WORK/torch_cnn.pred.json" 1e-5
  done
  # The registered import exports again, and ONNX Runtime agrees with PyTorch.
  bytea_to_file "hopper.export_onnx('torch_cnn')" "$WORK/torch_again.onnx"
  node test/onnx/run_onnx.js "$WORK/torch_again.onnx" "$WORK/torch_cnn.rows.json" >"$WORK/torch_again.json"
  compare "import then export: ONNX Runtime vs PyTorch" "$WORK/torch_again.json" "$WORK/torch_cnn.pred.json" 1e-5
fi

if [ $FAILURES -ne 0 ]; then
  echo "onnx_roundtrip.sh: $FAILURES failure(s)" >&2
  exit 1
fi
echo "onnx_roundtrip.sh: all checks passed"
