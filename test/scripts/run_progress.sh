#!/usr/bin/env bash
# hopper.run_progress, read from a second session while fit_multiple, fit, fit_data_parallel and
# fit_automl run in a first: the run is there with its method, iteration i of N, hop h of H, one row
# per segment with the configuration it trains, buffers done of the segment's count, rows/s, elapsed
# and estimated time left, the best searcher value once evaluated and the pids of the processes that
# train; the numbers move on between two reads; a third session that sets hopper.progress_run to the
# run's id and trains by hand does not show up in it; the run leaves the view once it is cancelled;
# a run with hopper.track_progress = off is not in it.
# Needs the test cluster (test/cluster.sh: PGHOST, PGPORT) with hopper preloaded.
set -euo pipefail
DB=hopper_run_progress
q() { psql -qAtX -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
fail() { echo "run_progress.sh: FAILED: $*" >&2; exit 1; }
# Whatever happens, no run of this script outlives it.
CLIENT_LOG=$(mktemp)
# A run that does not show up: say why, from what its client printed (an error, or nothing yet).
client_said() { [ -s "$CLIENT_LOG" ] && echo "its client printed: $(tr '\n' ' ' <"$CLIENT_LOG")" || echo "its client printed nothing"; }
trap 'rm -f "$CLIENT_LOG"; psql -qAtX -d postgres -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"'$DB'"' AND pid <> pg_backend_pid()" >/dev/null 2>&1 || true' EXIT

psql -qX -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE src AS
SELECT g AS id, (SELECT array_agg(sin(g * 0.11 + k * 0.7)) FROM generate_series(1, 60) k)::float8[] AS x, (g % 4) AS y
FROM generate_series(1, 12000) g;
SELECT hopper.preprocess('src', 'packed', 'y', 'x', buffer_size => 100, num_segments => 2, scale => 'standardize');
CREATE TABLE valid AS SELECT * FROM src WHERE id % 10 = 0;
SELECT hopper.preprocess_validation('valid', 'valid_packed', 'y', 'x', 'packed');
SELECT hopper.load_model_arch('archs', '{"input_dim": 60, "layers": [{"units": 128, "activation": "relu"}, {"units": 4, "activation": "softmax"}]}');
SELECT hopper.load_model_selection_table('archs', 'configs', ARRAY[1],
    ARRAY[$$optimizer='SGD(lr=0.05)', metrics=['accuracy']$$, $$optimizer='SGD(lr=0.01)', metrics=['accuracy']$$,
          $$optimizer='Adam(lr=0.001)', metrics=['accuracy']$$], ARRAY['batch_size=20']);
CALL hopper.fit('packed', 'seed_model', '{"input_dim": 60, "layers": [{"units": 4, "activation": "softmax"}]}', '', '', 1);
SQL
[ "$(q -c "SHOW shared_preload_libraries")" = hopper ] || fail "hopper is not preloaded in the test cluster"
BUFFERS=$(q -c "SELECT string_agg(dist_key || ':' || n, ',' ORDER BY dist_key) FROM (SELECT dist_key, count(*) n FROM packed GROUP BY 1) b")

# Starts a call in the background; waits until the view shows it past its first evaluation.
start() {  # name, CALL statement
  q -c "SET client_min_messages = warning" -c "$2" >/dev/null 2>"$CLIENT_LOG" &
  CLIENT=$!
  RUN=""
  for _ in $(seq 1 1200); do
    RUN=$(q -c "SELECT run_id FROM hopper.runs WHERE name = '$1' AND state = 'ACTIVE'")
    [ -n "$RUN" ] && [ "$(q -c "SELECT count(*) FROM hopper.run_progress WHERE run_id = $RUN AND iteration >= 2 AND buffers_done > 0")" -gt 0 ] && return 0
    sleep 0.1
  done
  fail "$1: no progress shown for run ${RUN:-?} in 120 s; $(client_said)"
}
snapshot() { q -c "SELECT pg_catalog.sum(buffers_done) + 1000 * max(iteration) + 100 * max(hop) FROM hopper.run_progress WHERE run_id = $RUN"; }
check() {  # name, method, segments expected, expect best value (t/f)
  local out
  out=$(q -F '|' -c "SELECT p.method, p.pid = r.backend_pid, count(*), string_agg(p.segment || ':' || p.buffers_total, ',' ORDER BY p.segment),
                            bool_and(p.iteration BETWEEN 1 AND p.num_iterations), bool_and(p.hop BETWEEN 0 AND p.hops_per_iteration),
                            bool_and(p.buffers_done BETWEEN 0 AND p.buffers_total), bool_and(p.mst_key IS NOT NULL),
                            bool_and(p.segment_pid = p.pid OR p.segment_pid IN (SELECT a.pid FROM pg_stat_activity a WHERE a.leader_pid = p.pid)
                                     OR p.segment_pid NOT IN (SELECT a.pid FROM pg_stat_activity a)),
                            bool_and(p.elapsed_seconds > 0), bool_and(p.fraction_done > 0 AND p.fraction_done < 1),
                            bool_and(p.estimated_seconds_left >= 0), bool_and(p.best_searcher_value IS NOT NULL) = $4,
                            bool_and(p.run_name = '$1'), bool_and(NOT p.on_worker_node)
                     FROM hopper.run_progress p JOIN hopper.runs r USING (run_id) WHERE p.run_id = $RUN GROUP BY 1, 2")
  [ "$out" = "$2|t|$3|$BUFFERS|t|t|t|t|t|t|t|t|t|t|t" ] || fail "$1: unexpected progress: $out"
  local before after
  before=$(snapshot); sleep 0.3
  for _ in $(seq 1 50); do after=$(snapshot); [ "$after" != "$before" ] && break; sleep 0.1; done
  [ "$after" != "$before" ] || fail "$1: progress did not move ($before)"
}
stop() {  # cancels the run and waits until the view forgets it
  q -c "SELECT pg_cancel_backend(backend_pid) FROM hopper.runs WHERE run_id = $RUN" >/dev/null
  wait "$CLIENT" 2>/dev/null || true
  [ "$(q -c "SELECT count(*) FROM hopper.run_progress WHERE run_id = $RUN")" = 0 ] || fail "cancelled run $RUN is still in the view"
}

start fm "CALL hopper.fit_multiple('packed', 'out_fm', 'configs', 1000, validation_table => 'valid_packed',
                                   metrics_compute_frequency => 1, name => 'fm')"
check fm fit_multiple 2 true
# A session that points hopper.progress_run at the run and trains by hand writes nowhere.
q -c "SET hopper.progress_run = $RUN" \
  -c "SELECT count(*) FROM (SELECT hopper.train_segment((SELECT model_state FROM seed_model), d.independent_var,
                                                        d.dependent_var, 99, d.dist_key) FROM packed d GROUP BY d.dist_key) t" >/dev/null
[ "$(q -c "SELECT count(*) FROM hopper.run_progress WHERE mst_key = 99 OR on_worker_node")" = 0 ] ||
  fail "a session that set hopper.progress_run by hand shows up in the run's progress"
stop

start fit "CALL hopper.fit('packed', 'out_fit', '{\"input_dim\": 60, \"layers\": [{\"units\": 128, \"activation\": \"relu\"}, {\"units\": 4, \"activation\": \"softmax\"}]}',
                           '', 'batch_size=20', 1000, name => 'fit')"
check fit fit 2 true
stop

start dp "CALL hopper.fit_data_parallel('packed', 'out_dp', '{\"input_dim\": 60, \"layers\": [{\"units\": 128, \"activation\": \"relu\"}, {\"units\": 4, \"activation\": \"softmax\"}]}',
                                        '', 'batch_size=20', 1000, name => 'dp')"
check dp fit_data_parallel 2 true
stop

start am "CALL hopper.fit_automl('packed', 'out_am', 'archs', model_id_list => '{1}',
                                 compile_params_grid => '{\"loss\": \"categorical_crossentropy\", \"learning_rate\": {\"log_uniform\": [0.001, 0.1]}}',
                                 max_iterations => 81, random_state => 3, metrics_compute_frequency => 1, name => 'am')"
check am fit_automl 2 true
stop
# hopper.track_progress = off: the run is in hopper.runs but not in the view. Metrics every iteration,
# so that trial_metrics shows the run under way after its first iteration (with the default, only
# at its end: the wait then saw the run only if it was still going when the wait gave up).
q -c "SET client_min_messages = warning" -c "SET hopper.track_progress = off" \
  -c "CALL hopper.fit_multiple('packed', 'out_off', 'configs', 1000, metrics_compute_frequency => 1, name => 'off')" >/dev/null 2>"$CLIENT_LOG" &
CLIENT=$!
RUN=""
for _ in $(seq 1 1200); do
  RUN=$(q -c "SELECT run_id FROM hopper.runs WHERE name = 'off' AND state = 'ACTIVE'")
  [ -n "$RUN" ] && [ "$(q -c "SELECT count(*) FROM hopper.trial_metrics m JOIN hopper.trials t USING (trial_id) WHERE t.run_id = $RUN")" -gt 0 ] && break
  sleep 0.1
done
[ -n "$RUN" ] || fail "off: the run did not start in 120 s; $(client_said)"
[ "$(q -c "SELECT count(*) FROM hopper.run_progress WHERE run_id = $RUN")" = 0 ] || fail "a run with hopper.track_progress = off is in the view"
stop
echo "run_progress.sh: ok (fit_multiple, fit, fit_data_parallel, fit_automl seen from another session; a hand-set hopper.progress_run writes nowhere)"
