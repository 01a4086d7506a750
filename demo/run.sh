#!/usr/bin/env bash
# hopper demo, end to end on a fresh Debian 12 machine:
#   installs what hopper needs, builds and installs the extension, starts a local throwaway
#   PostgreSQL cluster, loads Fashion-MNIST (Debian's dataset-fashion-mnist: 60,000 training and
#   10,000 test images of clothes), packs it over 4 segments, trains 4 model configurations at once
#   with fit_multiple (model hopping), and shows the learning curves, the test accuracy, predictions
#   and the checkpoints.
# The cluster keeps running afterwards so you can look around; the script prints how to connect and
# how to stop it. DEMO_DIR (default /tmp/hopper-demo) holds the cluster; ITERATIONS (default 10).
# PG_TREE=/some/dir installs into a private copy of PostgreSQL there instead of the system's
# (test/private-install.sh), leaving the system installation untouched.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
DEMO_DIR=${DEMO_DIR:-/tmp/hopper-demo}
ITERATIONS=${ITERATIONS:-10}
DATA=/usr/share/datasets/fashion-mnist
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

echo "== installing dependencies (Debian packages)"
bash scripts/install-deps.sh dataset-fashion-mnist

echo "== building and installing hopper"
make -j"$(nproc)" PG_CONFIG="$PG_CONFIG" >/dev/null
if [ -n "${PG_TREE:-}" ]; then
  eval "$(test/private-install.sh "$PG_TREE")"
  export PG_BIN
else
  $SUDO make install PG_CONFIG="$PG_CONFIG" >/dev/null
fi
cmake -S . -B build/core -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/core --target hopper_load_idx -j"$(nproc)" >/dev/null

echo "== starting a local cluster in $DEMO_DIR"
[ -d "$DEMO_DIR" ] && test/cluster.sh stop "$DEMO_DIR"
eval "$(HOPPER_TEST_PORT=${DEMO_PORT:-54330} test/cluster.sh start "$DEMO_DIR")"
export PGDATABASE=hopper_demo
psql -q -X -d postgres -c "CREATE DATABASE hopper_demo"
run() { psql -X -v ON_ERROR_STOP=1 -P pager=off "$@"; }

echo "== loading Fashion-MNIST"
run -q -c "CREATE EXTENSION hopper" \
       -c "CREATE TABLE fashion_train (id int PRIMARY KEY, label int, class_name text, pixels real[])" \
       -c "CREATE TABLE fashion_test (id int PRIMARY KEY, label int, class_name text, pixels real[])"
build/core/hopper_load_idx "$DATA/train-images-idx3-ubyte.gz" "$DATA/train-labels-idx1-ubyte.gz" |
  run -q -c "COPY fashion_train FROM STDIN (FORMAT binary)"
build/core/hopper_load_idx "$DATA/t10k-images-idx3-ubyte.gz" "$DATA/t10k-labels-idx1-ubyte.gz" |
  run -q -c "COPY fashion_test FROM STDIN (FORMAT binary)"

run -e <<SQL
-- Pack the images into minibatch buffers of 256 rows over 4 segments (pixels / 255).
SELECT hopper.preprocess('fashion_train', 'fashion_packed', 'class_name', 'pixels',
                         buffer_size => 256, num_segments => 4, normalizing_const => 255, seed => 1);
SELECT hopper.preprocess_validation('fashion_test', 'fashion_test_packed', 'class_name', 'pixels',
                                    'fashion_packed');

-- Two architectures and four configurations to compare.
SELECT hopper.load_model_arch('demo_arch',
  '{"input_dim": 784, "layers": [{"units": 128, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}',
  'mlp-128', 'one hidden layer of 128 units');
SELECT hopper.load_model_arch('demo_arch',
  '{"input_dim": 784, "layers": [{"units": 256, "activation": "relu", "dropout": 0.2},
                                 {"units": 10, "activation": "softmax"}]}',
  'mlp-256-dropout', 'one hidden layer of 256 units with dropout');
SELECT hopper.load_model_selection_table('demo_arch', 'demo_mst', ARRAY[1, 2],
  ARRAY[\$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']\$\$,
        \$\$loss='categorical_crossentropy', optimizer='SGD(lr=0.01, momentum=0.9)', metrics=['accuracy']\$\$],
  ARRAY['batch_size=128']);
SELECT * FROM demo_mst ORDER BY mst_key;

-- Train all four at once: every iteration, each model visits every segment once (model hopping).
CALL hopper.fit_multiple('fashion_packed', 'demo_models', 'demo_mst', $ITERATIONS,
                         validation_table => 'fashion_test_packed', metrics_compute_frequency => 1,
                         name => 'fashion demo');

-- Learning curves: validation (test set) accuracy per iteration, for every configuration.
SELECT i.mst_key, a.name AS architecture, m.compile_params,
       round(i.validation_metrics_final::numeric, 4) AS test_accuracy,
       (SELECT string_agg(round(v::numeric, 3)::text, ' ') FROM unnest(i.validation_metrics) v) AS accuracy_per_iteration
FROM demo_models_info i JOIN demo_mst m USING (mst_key) JOIN demo_arch a ON a.model_id = m.model_id
ORDER BY i.validation_metrics_final DESC;

-- The best configuration, evaluated again on the test set, and a few predictions.
SELECT * FROM hopper.evaluate('demo_models', 'fashion_test_packed',
  (SELECT mst_key FROM demo_models_info ORDER BY validation_metrics_final DESC LIMIT 1));
SELECT hopper.predict('demo_models', 'fashion_test', 'id', 'pixels', 'demo_predictions',
  mst_key => (SELECT mst_key FROM demo_models_info ORDER BY validation_metrics_final DESC LIMIT 1));
SELECT t.id, t.class_name AS truth, p.estimated_class_name AS predicted
FROM fashion_test t JOIN demo_predictions p USING (id) ORDER BY t.id LIMIT 8;
SELECT round(avg((p.estimated_class_name = t.class_name)::int), 4) AS accuracy_of_predictions
FROM fashion_test t JOIN demo_predictions p USING (id);

-- Where the time went.
SELECT num_models, num_segments, hops_per_iteration, round(training_seconds::numeric, 2) AS training_s,
       round(hop_seconds::numeric, 3) AS hop_s, round(evaluation_seconds::numeric, 2) AS evaluation_s
FROM demo_models_summary;
SQL

if [ -f demo/checkpoints.sql ]; then
  echo "== checkpoints"
  run -e -f demo/checkpoints.sql
fi

cat <<EOF

The demo cluster is still running. Look around with:
  psql -h $DEMO_DIR -p $PGPORT -U postgres hopper_demo
Stop it with:
  test/cluster.sh stop $DEMO_DIR
EOF
