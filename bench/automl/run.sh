#!/usr/bin/env bash
# bench/automl/run.sh: adaptive model selection on Fashion-MNIST (issue 14). One random search space
# -- learning rate log-uniform in [1e-4, 0.3], optimizer sgd or adam, 64, 128 or 256 hidden units,
# batch size 64, 128 or 256 -- searched three ways on 2 segments, all with the test set as the
# validation table and validation accuracy as the searcher metric:
#   1. hopper.fit_automl, Hyperband with R = 27 iterations, eta = 3 (49 configurations in 4 brackets),
#      brackets packed into one hop ring (the default);
#   2. the same search with pack_brackets => false (one bracket after the other), to measure what
#      packing buys when survivors are fewer than segments (same decisions, bit for bit);
#   3. the full search: hopper.fit_multiple of the same 49 configurations for 27 iterations each.
# The report gives, side by side from this one run: best validation accuracy, model-epochs (iterations
# trained, summed over configurations) and wall seconds of each, and the ratios.
#
#   bash bench/automl/run.sh                   # builds, private cluster, loads the data (~10 min on 2 cores)
#   BENCH_AUTOML_R=9 bash bench/automl/run.sh  # shorter: R = 9 (17 configurations)
#
# Settings (environment): BENCH_AUTOML_R (default 27), BENCH_AUTOML_ETA (3), BENCH_AUTOML_SEED (random_state,
# 42), BENCH_AUTOML_OUT (report; default bench/results/<date>-<host>-automl.md), and bench/run.sh's
# BENCH_DIR, BENCH_PORT, BENCH_SKIP_DEPS, BENCH_KEEP.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source bench/env.sh
R=${BENCH_AUTOML_R:-27}
ETA=${BENCH_AUTOML_ETA:-3}
SEED=${BENCH_AUTOML_SEED:-42}
OUT=${BENCH_AUTOML_OUT:-$ROOT/bench/results/$(date +%F)-$(hostname -s)-automl.md}

if [ "${BENCH_AUTOML_REUSE:-0}" = 1 ]; then
  run() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }   # a running cluster with the data (PGHOST... exported)
else
  source bench/setup.sh
fi
q() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }

echo "== packing Fashion-MNIST over 2 segments (the test set is the validation table)"
run >/dev/null 2>&1 <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS automl_packed, automl_packed_summary, automl_valid, automl_valid_summary, automl_arch CASCADE;
SELECT hopper.preprocess('fashion_train', 'automl_packed', 'class_name', 'pixels',
                         buffer_size => 256, num_segments => 2, normalizing_const => 255, seed => 1);
SELECT hopper.preprocess_validation('fashion_test', 'automl_valid', 'class_name', 'pixels', 'automl_packed');
SELECT hopper.load_model_arch('automl_arch', format('{"input_dim": 784, "layers": [{"units": %s, "activation": "relu"},
                                                     {"units": 10, "activation": "softmax"}]}', u)::jsonb, u || ' hidden units')
FROM unnest(ARRAY[64, 128, 256]) u;
VACUUM ANALYZE;
SQL

for t in bench_hb bench_hb_seq bench_full; do
  run -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS ${t}, ${t}_info, ${t}_summary, ${t}_mst, ${t}_mst_summary" >/dev/null
done

SPACE_COMPILE='{"loss": "categorical_crossentropy", "optimizer": ["sgd", "adam"], "learning_rate": {"log_uniform": [0.0001, 0.3]}, "metrics": ["accuracy"]}'
SPACE_FIT='{"batch_size": [64, 128, 256]}'
search() {  # output table, pack_brackets
  local t0 t1
  t0=$(date +%s.%N)
  run -c "SET client_min_messages = warning" -c "CALL hopper.fit_automl('automl_packed', '$1', 'automl_arch',
      model_id_list => '{1,2,3}', compile_params_grid => '$SPACE_COMPILE', fit_params_grid => '$SPACE_FIT',
      automl_method => 'hyperband', max_iterations => $R, eta => $ETA, random_state => $SEED,
      validation_table => 'automl_valid', searcher_metric => 'accuracy', pack_brackets => $2, name => '$1')"
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}

echo "== Hyperband, brackets packed (R = $R, eta = $ETA)"
HB_SECONDS=$(search bench_hb true)
echo "   $HB_SECONDS s"
echo "== Hyperband, one bracket after the other"
SEQ_SECONDS=$(search bench_hb_seq false)
echo "   $SEQ_SECONDS s"
CONFIGS=$(q -c "SELECT count(*) FROM bench_hb_mst")
echo "== full search: fit_multiple of the same $CONFIGS configurations, $R iterations each"
T0=$(date +%s.%N)
run -c "SET client_min_messages = warning" \
    -c "CALL hopper.fit_multiple('automl_packed', 'bench_full', 'bench_hb_mst', $R, validation_table => 'automl_valid', name => 'bench_full')"
T1=$(date +%s.%N)
FULL_SECONDS=$(echo "$T1 - $T0" | bc)
echo "   $FULL_SECONDS s"

HB_RUN=$(q -c "SELECT run_id FROM hopper.runs WHERE name = 'bench_hb' ORDER BY run_id DESC LIMIT 1")
SEQ_RUN=$(q -c "SELECT run_id FROM hopper.runs WHERE name = 'bench_hb_seq' ORDER BY run_id DESC LIMIT 1")
read -r HB_BEST HB_KEY HB_EPOCHS <<<"$(q -F ' ' -c "SELECT round(b.searcher_value::numeric * 100, 2), s.best_mst_key,
    (SELECT sum(iterations_in_rung * cardinality(mst_keys)) FROM hopper.search_brackets WHERE run_id = $HB_RUN)
  FROM hopper.searches s JOIN hopper.checkpoint_training b ON b.checkpoint_id = s.best_checkpoint_id WHERE s.run_id = $HB_RUN")"
SEQ_SAME=$(q -c "SELECT count(*) = 0 FROM (
    (SELECT t.mst_key, x.rung, x.rank, x.searcher_value FROM hopper.trial_rungs x JOIN hopper.trials t USING (trial_id) WHERE x.run_id = $HB_RUN
     EXCEPT SELECT t.mst_key, x.rung, x.rank, x.searcher_value FROM hopper.trial_rungs x JOIN hopper.trials t USING (trial_id) WHERE x.run_id = $SEQ_RUN)
    UNION ALL
    (SELECT t.mst_key, x.rung, x.rank, x.searcher_value FROM hopper.trial_rungs x JOIN hopper.trials t USING (trial_id) WHERE x.run_id = $SEQ_RUN
     EXCEPT SELECT t.mst_key, x.rung, x.rank, x.searcher_value FROM hopper.trial_rungs x JOIN hopper.trials t USING (trial_id) WHERE x.run_id = $HB_RUN)) d")
read -r FULL_BEST FULL_KEY FULL_EPOCHS <<<"$(q -F ' ' -c "SELECT round(validation_metrics_final::numeric * 100, 2), mst_key,
    (SELECT sum(metrics_iters[cardinality(metrics_iters)]) FROM bench_full_info)
  FROM bench_full_info ORDER BY validation_metrics_final DESC NULLS LAST, mst_key LIMIT 1")"
# Where the full search's best configuration stopped in Hyperband.
FULL_KEY_IN_HB=$(q -c "SELECT status || coalesce(' at rung ' || stopped_at_rung, '') || ', bracket ' || bracket FROM hopper.search_trials
                      WHERE run_id = $HB_RUN AND mst_key = $FULL_KEY")
BRACKETS=$(q -c "SELECT string_agg(format('bracket %s: %s', bracket, rungs), '; ' ORDER BY bracket DESC) FROM (
                   SELECT bracket, string_agg(format('%s x %s it.', num_configs, budget), ' -> ' ORDER BY rung) AS rungs
                   FROM hopper.search_brackets WHERE run_id = $HB_RUN GROUP BY bracket) b")

ratio() { echo "scale=3; $1 / $2" | bc; }
GAP=$(echo "$FULL_BEST - $HB_BEST" | bc)
EPOCH_RATIO=$(ratio "$HB_EPOCHS" "$FULL_EPOCHS")
MEETS=no
if [ "$(echo "$GAP <= 0.5 && $EPOCH_RATIO <= 0.40" | bc)" = 1 ]; then MEETS=yes; fi

mkdir -p "$(dirname "$OUT")"
{
  echo "# Adaptive model selection on Fashion-MNIST ($(date -u +%F), commit $COMMIT)"
  echo
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load before the run $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Data: Fashion-MNIST, 60,000 training rows packed over 2 segments (buffers of 256 rows), the 10,000 test rows as"
  echo "validation table. Space: 784-{64,128,256}-10 MLP, optimizer sgd or adam, learning rate log-uniform in [1e-4, 0.3],"
  echo "batch size 64, 128 or 256; random_state $SEED. Searcher metric: validation accuracy. Whole CALLs with their defaults,"
  echo "timed from psql."
  echo
  echo "Hyperband R = $R, eta = $ETA: $BRACKETS."
  echo
  echo "| search | configurations | model-epochs | wall s | best validation accuracy | best mst_key |"
  echo "|---|---:|---:|---:|---:|---:|"
  echo "| hyperband (fit_automl, brackets packed) | $CONFIGS | $HB_EPOCHS | $(printf %.1f "$HB_SECONDS") | $HB_BEST% | $HB_KEY |"
  echo "| hyperband, one bracket after the other | $CONFIGS | $HB_EPOCHS | $(printf %.1f "$SEQ_SECONDS") | same decisions: $SEQ_SAME | |"
  echo "| full search (fit_multiple, $R iterations each) | $CONFIGS | $FULL_EPOCHS | $(printf %.1f "$FULL_SECONDS") | $FULL_BEST% | $FULL_KEY |"
  echo
  echo "- Hyperband / full: model-epochs $EPOCH_RATIO, wall time $(ratio "$HB_SECONDS" "$FULL_SECONDS"); best accuracy $GAP percentage points below the full search's."
  echo "- Target (within 0.5 points of the full search's best with at most 40% of its model-epochs): **$MEETS**."
  echo "- The full search's best configuration (mst_key $FULL_KEY) in Hyperband: $FULL_KEY_IN_HB."
  echo "- Packing the brackets into one hop ring: $(ratio "$SEQ_SECONDS" "$HB_SECONDS")x faster than one bracket after the other."
} > "$OUT"
echo "== report: $OUT"
cat "$OUT"
