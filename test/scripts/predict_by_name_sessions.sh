#!/usr/bin/env bash
# hopper.predict_class by name across sessions: session A keeps its resolution and model cached;
# session B moves an alias, deletes a version, archives the model. A never answers from a change B
# has not committed, and always answers from one B has committed (A's next statement after B's
# COMMIT returns), in READ COMMITTED and, from its next transaction, REPEATABLE READ.
# Session A is one long-lived psql (a coprocess), so its per-session caches persist between checks.
# Needs PGHOST/PGPORT/PGUSER of a cluster with hopper installed.
set -euo pipefail

DB=hopper_predict_sessions
export PGDATABASE=$DB
FAILURES=0
psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

cleanup() {
  local rc=$?
  if [ -n "${A_PID:-}" ]; then kill "$A_PID" 2>/dev/null || true; wait "$A_PID" 2>/dev/null || true; fi
  if [ -n "${B_PID:-}" ]; then kill "$B_PID" 2>/dev/null || true; wait "$B_PID" 2>/dev/null || true; fi
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  exit $rc
}
trap cleanup EXIT

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null
psql -X -q -d postgres -c "CREATE DATABASE $DB" >/dev/null
psql_q <<'SQL' >/dev/null
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE pts AS SELECT g AS id, ARRAY[(g % 2) * 4.0 + sin(g), (g % 2) * -4.0 + cos(g)]::float8[] AS x,
       CASE g % 2 WHEN 0 THEN 'even' ELSE 'odd' END AS label FROM generate_series(1, 100) g;
SELECT hopper.preprocess('pts', 'pts_packed', 'label', 'x', buffer_size => 20, scale => 'standardize', seed => 1);
CALL hopper.fit('pts_packed', 'm1', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.01)'$$, 'batch_size=10', 1, name => 'f1');
CALL hopper.fit('pts_packed', 'm2', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.5)'$$, 'batch_size=10', 3, name => 'f2');
SELECT hopper.create_model('m');
SELECT hopper.register_model_version('m', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'f1'));
SELECT hopper.register_model_version('m', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'f2'));
SELECT hopper.set_model_alias('m', 'prod', 1);
-- Which version answers: the probabilities of row 1 under each.
CREATE TABLE answers AS
SELECT v.version, hopper.model_forward(hopper.model_version_state('m', v.version), p.x, e.normalizing_const,
                                       e.feature_center, e.feature_spread) AS prob
FROM hopper.model_versions_expanded e JOIN hopper.model_versions v USING (version_id), pts p
WHERE e.model_name = 'm' AND p.id = 1;
SQL
if [ "$(psql_q -c "SELECT count(DISTINCT prob) FROM answers")" != 2 ]; then
  echo "FAIL: the two versions give the same answer for row 1; the test cannot tell them apart" >&2; exit 1
fi

coproc A { psql -X -q -At -v ON_ERROR_STOP=0 2>&1; }
A_PID=$A_PID
# (bash warns that coproc A still exists: two coprocesses are what this test needs)
{ coproc B { psql -X -q -At -v ON_ERROR_STOP=0 2>&1; }; } 2>/dev/null
B_PID=$B_PID

# Runs SQL in a session and returns its output up to a marker.
run() {
  local -n fd=$1
  echo "$2; SELECT 'run-done';" >&"${fd[1]}"
  local line out=""
  while read -r -t 60 line <&"${fd[0]}"; do
    [ "$line" = run-done ] && { printf '%s' "$out"; return 0; }
    out+="$line"$'\n'
  done
  echo "session did not answer: $2" >&2; exit 1
}
# Which version session A gets for row 1 by alias/latest (arguments: version => / alias => SQL).
which() {
  run A "SELECT coalesce((SELECT a.version::text FROM answers a WHERE a.prob = hopper.predict_proba('m', (SELECT x FROM pts WHERE id = 1)$1)), 'none')" | tr -d '\n'
}
expect() {  # name expected actual
  if [ "$2" = "$3" ]; then echo "ok: $1 ($3)"; else echo "FAIL: $1: expected $2, got $3" >&2; FAILURES=$((FAILURES + 1)); fi
}

expect "A by alias, cached" 1 "$(which ", alias => 'prod'")"
expect "A latest, cached" 2 "$(which "")"
# B moves the alias but has not committed: A still sees version 1.
run B "BEGIN; SELECT hopper.set_model_alias('m', 'prod', 2)" >/dev/null
expect "A while B's move is uncommitted" 1 "$(which ", alias => 'prod'")"
run B "COMMIT" >/dev/null
expect "A after B committed the move" 2 "$(which ", alias => 'prod'")"
# A inside a READ COMMITTED transaction that already used the alias: its next statement sees B's commit.
run A "BEGIN" >/dev/null
expect "A in a transaction" 2 "$(which ", alias => 'prod'")"
run B "SELECT hopper.set_model_alias('m', 'prod', 1)" >/dev/null
expect "A, same READ COMMITTED transaction, next statement" 1 "$(which ", alias => 'prod'")"
run A "COMMIT" >/dev/null
# REPEATABLE READ: A keeps its snapshot's answer, and after it the committed one.
run A "BEGIN ISOLATION LEVEL REPEATABLE READ" >/dev/null
expect "A repeatable read, first" 1 "$(which ", alias => 'prod'")"
run B "SELECT hopper.set_model_alias('m', 'prod', 2)" >/dev/null
expect "A repeatable read, its snapshot" 1 "$(which ", alias => 'prod'")"
run A "COMMIT" >/dev/null
expect "A after its repeatable read transaction" 2 "$(which ", alias => 'prod'")"
# B deletes version 2 (uncommitted, then rolled back, then committed): latest goes back to 1.
run B "BEGIN; SELECT hopper.delete_model_version('m', 2)" >/dev/null
expect "A latest while B's delete is uncommitted" 2 "$(which "")"
run B "ROLLBACK" >/dev/null
expect "A latest after B rolled back" 2 "$(which "")"
run B "SELECT hopper.delete_model_version('m', 2)" >/dev/null
expect "A latest after B deleted version 2" 1 "$(which "")"
out=$(run A "SELECT hopper.predict_class('m', ARRAY[1, 2]::real[], version => 2)")
expect "A asks for the deleted version" "ERROR:  version 2 of model \"m\" does not exist" "$(printf '%s' "$out" | head -1)"
out=$(run A "SELECT hopper.predict_class('m', ARRAY[1, 2]::real[], alias => 'prod')")
expect "A asks for the alias of the deleted version" "ERROR:  alias \"prod\" of model \"m\" does not exist" "$(printf '%s' "$out" | head -1)"
# B archives the model: it still answers (archiving only stops new versions).
run B "SELECT hopper.archive_model('m')" >/dev/null
expect "A after B archived the model" 1 "$(which "")"
# B drops the model: A gets a clean 42704.
run B "SELECT hopper.delete_model('m')" >/dev/null
out=$(run A "SELECT hopper.predict_class('m', ARRAY[1, 2]::real[])")
expect "A after B deleted the model" "ERROR:  model \"m\" does not exist" "$(printf '%s' "$out" | head -1)"

if [ "$FAILURES" -gt 0 ]; then echo "$FAILURES FAILED" >&2; exit 1; fi
echo "all ok"
