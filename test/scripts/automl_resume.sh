#!/usr/bin/env bash
# Adaptive search, interrupted and continued: hopper.fit_automl runs Hyperband once without
# interruption; then the same search (same random_state) is killed -- the backend by kill -9 once a
# few rungs have completed, and a second time by a cancel -- and continued each time with
# CALL hopper.fit_automl(run_id => ...). The continued search must reach the same decisions (every
# trial's rank, searcher value and promotion at every rung), the same learning-curve points and the
# same final model states, bit for bit, as the uninterrupted one. A third session tries to continue
# a search that is running (55006) and one that completed (55000).
# Needs the test cluster (test/cluster.sh: PGHOST, PGPORT).
set -euo pipefail
DB=hopper_automl_resume
q() { psql -qAtX -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
fail() { echo "automl_resume.sh: FAILED: $*" >&2; exit 1; }

psql -qX -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE pts AS
SELECT g AS id, (SELECT array_agg(sin(g * 0.37 + k * 1.1) + (g % 3) * 0.4 * (k % 2)) FROM generate_series(1, 8) k)::float8[] AS x,
       (ARRAY['red', 'green', 'blue'])[g % 3 + 1] AS label
FROM generate_series(1, 15000) g;
SELECT hopper.preprocess('pts', 'pk', 'label', 'x', buffer_size => 100, num_segments => 2, scale => 'standardize', seed => 5);
CREATE TABLE pv AS SELECT * FROM pts WHERE id % 5 = 0;
SELECT hopper.preprocess_validation('pv', 'pvk', 'label', 'x', 'pk');
SELECT hopper.load_model_arch('arch', '{"input_dim": 8, "layers": [{"units": 1024, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}');
SELECT hopper.load_model_arch('arch', '{"input_dim": 8, "layers": [{"units": 3, "activation": "softmax"}]}');
SQL

search() {
  q -c "SET client_min_messages = warning" -c "CALL hopper.fit_automl('pk', '$1', 'arch', model_id_list => '{1,2}',
    compile_params_grid => '{\"loss\": \"categorical_crossentropy\", \"optimizer\": [\"sgd\", \"adam\"],
                             \"learning_rate\": {\"log_uniform\": [0.0001, 0.3]}, \"metrics\": [\"accuracy\"]}',
    fit_params_grid => '{\"batch_size\": [16, 64]}', validation_table => 'pvk', random_state => 11,
    max_iterations => 9, metrics_compute_frequency => 2, searcher_metric => 'accuracy')"
}
run_of() { q -c "SELECT run_id FROM hopper.runs WHERE model_output_table = 'public.$1'"; }
completed_rungs() { q -c "SELECT count(*) FROM hopper.search_rungs WHERE run_id = $1 AND state = 'COMPLETED'"; }
wait_for_rungs() {  # run id, completed rungs to wait for
  for _ in $(seq 1 600); do
    [ "$(completed_rungs "$1")" -ge "$2" ] && return 0
    sleep 0.05
  done
  fail "run $1 did not complete $2 rungs"
}

search uninterrupted
A=$(run_of uninterrupted)

# The same search, killed with kill -9 after two rungs.
search interrupted >/dev/null 2>&1 &
CLIENT=$!
for _ in $(seq 1 200); do B=$(run_of interrupted); [ -n "$B" ] && break; sleep 0.05; done
[ -n "$B" ] || fail "the second search did not start"
wait_for_rungs "$B" 2
PID=$(q -c "SELECT backend_pid FROM hopper.runs WHERE run_id = $B")
kill -9 "$PID"
wait "$CLIENT" 2>/dev/null || true
for _ in $(seq 1 100); do pg_isready -q && q -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.1; done
[ "$(q -c "SELECT state FROM hopper.runs WHERE run_id = $B")" = INTERRUPTED ] || fail "a killed search does not read INTERRUPTED"
[ "$(q -c "SELECT to_regclass('interrupted') IS NULL")" = t ] || fail "a killed search left its output table"
# The same call again finds the search's model selection table: it says how to continue the search
# (it said only "Drop it first or choose another name", a hostile review).
OUT=$(search interrupted 2>&1 || true)
case "$OUT" in *"already exists"*"CALL hopper.fit_automl(run_id => $B)"*) ;;
  *) fail "the same call after a killed search does not point to continuing it: $OUT" ;; esac

# Continued, then cancelled, and continued again to the end. A session holding hopper.search_rungs
# in SHARE mode keeps the continued search from recording its next rung, so that the cancel finds it
# running however fast its last rungs are (waiting for it to complete a rung raced with its end).
psql -qX -d "$DB" -c "BEGIN" -c "LOCK TABLE hopper.search_rungs IN SHARE MODE" -c "SELECT pg_sleep(120) AS rung_holder" \
  -c "COMMIT" >/dev/null 2>&1 &
HOLDER=$!
for _ in $(seq 1 200); do
  [ "$(q -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(120) AS rung_holder%' AND pid <> pg_backend_pid()")" = 1 ] && break
  sleep 0.05
done
q -c "SET client_min_messages = warning" -c "CALL hopper.fit_automl(run_id => $B)" >/dev/null 2>&1 &
CLIENT=$!
for _ in $(seq 1 600); do
  [ "$(q -c "SELECT count(*) FROM pg_stat_activity a JOIN hopper.runs r ON r.backend_pid = a.pid
             WHERE r.run_id = $B AND r.state = 'ACTIVE' AND a.wait_event_type = 'Lock'")" = 1 ] && break
  sleep 0.05
done
# A third session may not continue a search that is running.
OUT=$(q -c "CALL hopper.fit_automl(run_id => $B)" 2>&1 || true)
case "$OUT" in *"is being run by another session"*) ;; *) fail "a running search was continued twice: $OUT" ;; esac
q -c "SELECT pg_cancel_backend(backend_pid) FROM hopper.runs WHERE run_id = $B" >/dev/null
wait "$CLIENT" 2>/dev/null || true
q -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(120) AS rung_holder%' AND pid <> pg_backend_pid()" >/dev/null
wait "$HOLDER" 2>/dev/null || true
[ "$(q -c "SELECT state FROM hopper.runs WHERE run_id = $B")" = INTERRUPTED ] || fail "a cancelled search does not read INTERRUPTED"
q -c "SET client_min_messages = warning" -c "CALL hopper.fit_automl(run_id => $B)" >/dev/null

# Same decisions, curves and final states as the uninterrupted search.
DIFF=$(q <<SQL
WITH d AS (SELECT x.run_id, t.mst_key, x.bracket, x.rung, x.rank, x.searcher_value, x.promoted, t.status
           FROM hopper.trial_rungs x JOIN hopper.trials t USING (trial_id))
SELECT (SELECT count(*) FROM (SELECT mst_key, bracket, rung, rank, searcher_value, promoted, status FROM d WHERE run_id = $A
                              EXCEPT SELECT mst_key, bracket, rung, rank, searcher_value, promoted, status FROM d WHERE run_id = $B) e)
     + (SELECT count(*) FROM (SELECT mst_key, bracket, rung, rank, searcher_value, promoted, status FROM d WHERE run_id = $B
                              EXCEPT SELECT mst_key, bracket, rung, rank, searcher_value, promoted, status FROM d WHERE run_id = $A) e)
SQL
)
[ "$DIFF" = 0 ] || fail "the continued search decided differently ($DIFF rows differ)"
[ "$(q -c "SELECT count(*) FROM hopper.trial_rungs WHERE run_id = $A")" = "$(q -c "SELECT count(*) FROM hopper.trial_rungs WHERE run_id = $B")" ] ||
  fail "the continued search recorded a different number of decisions"
CURVES=$(q <<SQL
WITH c AS (SELECT t.run_id, t.mst_key, m.iteration, m.validation_metrics, m.searcher_value
           FROM hopper.trial_metrics m JOIN hopper.trials t USING (trial_id))
SELECT count(*) FROM ((SELECT mst_key, iteration, validation_metrics, searcher_value FROM c WHERE run_id = $A
                       EXCEPT ALL SELECT mst_key, iteration, validation_metrics, searcher_value FROM c WHERE run_id = $B)
                      UNION ALL
                      (SELECT mst_key, iteration, validation_metrics, searcher_value FROM c WHERE run_id = $B
                       EXCEPT ALL SELECT mst_key, iteration, validation_metrics, searcher_value FROM c WHERE run_id = $A)) e
SQL
)
[ "$CURVES" = 0 ] || fail "the continued search's learning curves differ ($CURVES points)"
STATES=$(q -c "SELECT count(*) FROM uninterrupted a FULL JOIN interrupted b USING (mst_key)
               WHERE a.model_state IS DISTINCT FROM b.model_state")
[ "$STATES" = 0 ] || fail "final model states differ for $STATES trials"
[ "$(q -c "SELECT state FROM hopper.runs WHERE run_id = $B")" = COMPLETED ] || fail "the continued search is not COMPLETED"
OUT=$(q -c "CALL hopper.fit_automl(run_id => $B)" 2>&1 || true)
case "$OUT" in *"is completed"*) ;; *) fail "a completed search was continued: $OUT" ;; esac
echo "automl_resume.sh: ok ($(q -c "SELECT count(*) FROM hopper.trial_rungs WHERE run_id = $B") decisions equal after kill -9 and cancel)"
