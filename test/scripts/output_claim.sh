#!/usr/bin/env bash
# Two sessions training into the same output table: the second is refused at once (55006, naming
# the first session's process) instead of training every iteration and failing at the end, and
# records no run; the first finishes. While a run trains, another session reads it ACTIVE in
# hopper.runs; once its session is cancelled, INTERRUPTED -- without anyone calling
# mark_interrupted_runs -- and the cancelled session can train into that output again at once.
# Other calls that create tables claim their names too, and a run claims all the tables it writes.
# Needs PGHOST/PGPORT/PGUSER of a test cluster (test/run-all.sh sets them); exits non-zero on failure.
set -euo pipefail
DB=hopper_output_claim
TMP=$(mktemp -d)
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
q() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
fail() { echo "output_claim: $*" >&2; exit 1; }

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE points AS
SELECT g AS id, ARRAY[(g % 3) * 2.0 + sin(g), cos(g)]::float8[] AS x, (g % 3)::text AS label FROM generate_series(1, 2000) g;
SELECT hopper.preprocess('points', 'packed', 'label', 'x', buffer_size => 50, num_segments => 2);
SQL
ARCH='{"input_dim": 2, "layers": [{"units": 64, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}'
wait_live() {  # waits until a run named $1 reads ACTIVE
  for _ in $(seq 400); do
    [ "$(q -A -t -c "SELECT count(*) FROM hopper.runs WHERE name = '$1' AND state = 'ACTIVE'")" = 1 ] && return 0
    sleep 0.05
  done
  fail "run $1 never became ACTIVE"
}
sleeping() {  # the SQL that finds another session sleeping in pg_sleep(60) AS $1
  echo "FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60) AS $1%' AND pid <> pg_backend_pid()"
}
wait_sleeping() {  # waits until another session sleeps in pg_sleep(60) AS $1
  for _ in $(seq 400); do
    [ "$(q -A -t -c "SELECT count(*) $(sleeping "$1")")" = 1 ] && return 0
    sleep 0.05
  done
}
cancel_sleeping() { q -c "SELECT pg_cancel_backend(pid) $(sleeping "$1")" >/dev/null; }

# Session A trains for a while (4,000 iterations: it is cancelled below); session B asks for the same
# output table meanwhile.
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "SET client_min_messages = warning" \
  -c "CALL hopper.fit('packed', 'shared_out', '$ARCH', '', 'batch_size=4', 4000, name => 'first')" >"$TMP/a.log" 2>&1 &
a=$!
wait_live first
a_pid=$(q -A -t -c "SELECT backend_pid FROM hopper.runs WHERE name = 'first'")
if q -c "SET client_min_messages = warning" \
     -c "CALL hopper.fit('packed', 'shared_out', '$ARCH', '', '', 1, name => 'second')" >"$TMP/b.log" 2>&1; then
  fail "the second session trained into an output table that another session is writing"
fi
grep -q "model output table public.shared_out is being written by another session" "$TMP/b.log" \
  || { cat "$TMP/b.log" >&2; fail "unexpected error for the second session"; }
grep -q "process id $a_pid is writing it" "$TMP/b.log" || { cat "$TMP/b.log" >&2; fail "the holder's pid is not named"; }
[ "$(q -A -t -c "SELECT count(*) FROM hopper.runs WHERE name = 'second'")" = 0 ] || fail "the refused run was recorded"
[ "$(q -A -t -c "SELECT state FROM hopper.runs WHERE name = 'first'")" = ACTIVE ] || fail "the first run does not read ACTIVE"

# A is cancelled: its run reads INTERRUPTED at once, and the output is free again.
q -A -t -c "SELECT pg_cancel_backend($a_pid)" >/dev/null
if wait "$a"; then fail "the cancelled run succeeded"; fi
grep -q "canceling statement due to user request" "$TMP/a.log" || { cat "$TMP/a.log" >&2; fail "unexpected error in session A"; }
actual=$(q -A -t -c "SELECT state || '|' || (SELECT state FROM hopper.run_records r WHERE r.run_id = v.run_id)
                     FROM hopper.runs v WHERE name = 'first'")
[ "$actual" = "INTERRUPTED|ACTIVE" ] || fail "expected the cancelled run to read INTERRUPTED (stored ACTIVE), got $actual"
q -c "SET client_min_messages = warning" -c "CALL hopper.fit('packed', 'shared_out', '$ARCH', '', '', 1, name => 'third')" \
  >"$TMP/c.log" 2>&1 || { cat "$TMP/c.log" >&2; fail "the output table stayed claimed after the cancel"; }
actual=$(q -A -t -c "SELECT string_agg(name || '=' || state, ',' ORDER BY run_id) FROM hopper.runs")
[ "$actual" = "first=INTERRUPTED,third=COMPLETED" ] || fail "runs: $actual"

# The same inside one session, in a transaction block, after a failed attempt: the claim went with
# the failed call's transaction, so a retry in the same session is not refused.
held=$(q -A -t <<SQL
SET client_min_messages = warning;
BEGIN;
DO \$\$ BEGIN
  CALL hopper.fit('packed', 'retry_out', '{"input_dim": 3, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1);
EXCEPTION WHEN OTHERS THEN NULL;
END \$\$;
CALL hopper.fit('packed', 'retry_out', '$ARCH', '', '', 1);
COMMIT;
SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
SQL
)
[ "$(q -A -t -c "SELECT count(*) FROM retry_out")" = 1 ] || fail "the retry in the same session failed"
[ "$held" = 0 ] || fail "the session still holds $held advisory locks after its runs"
# Every hopper call that creates a table claims its name until its transaction ends: a second
# session packing into the same new name is refused at once (it used to wait for the first and then
# fail on PostgreSQL's catalog, 23505 on pg_type_typname_nsp_index).
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "SET client_min_messages = warning" -c "BEGIN" \
  -c "SELECT hopper.preprocess('points', 'race_packed', 'label', 'x', buffer_size => 50)" \
  -c "SELECT pg_sleep(3) AS pack_holder" -c "COMMIT" >"$TMP/pa.log" 2>&1 &
pa=$!
for _ in $(seq 400); do
  [ "$(q -A -t -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3) AS pack_holder%' AND pid <> pg_backend_pid()")" = 1 ] && break
  sleep 0.05
done
if q -c "SET statement_timeout = '2s'" -c "SELECT hopper.preprocess('points', 'race_packed', 'label', 'x')" >"$TMP/pb.log" 2>&1; then
  fail "a second session packed into a table another session is creating"
fi
grep -q "ERROR:  output table public.race_packed is being written by another session" "$TMP/pb.log" \
  || { cat "$TMP/pb.log" >&2; fail "unexpected error for the second packing session"; }
wait "$pa" || { cat "$TMP/pa.log" >&2; fail "the first packing session failed"; }

# A run claims all the tables it writes at its end for as long as it trains: another call creating
# one of them (predict into its output, preprocess into its _info) is refused at once, where it used
# to succeed and make the run fail after training. A table of such a name created by plain SQL
# meanwhile fails the run at its end with hopper's message, and the run's last checkpoints, committed
# before its outputs are written, are kept.
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "SET client_min_messages = warning" \
  -c "CALL hopper.fit('packed', 'busy_out', '$ARCH', '', 'batch_size=4', 1500, name => 'busy')" >"$TMP/busy.log" 2>&1 &
busy=$!
wait_live busy
if q -c "SELECT hopper.predict('retry_out', 'points', 'id', 'x', 'busy_out')" >"$TMP/pr.log" 2>&1; then
  fail "predict wrote into the output table of a running run"
fi
grep -q "ERROR:  output table public.busy_out is being written by another session" "$TMP/pr.log" \
  || { cat "$TMP/pr.log" >&2; fail "unexpected error for predict"; }
if q -c "SELECT hopper.preprocess('points', 'busy_out_info', 'label', 'x')" >"$TMP/pp.log" 2>&1; then
  fail "preprocess wrote into the info table of a running run"
fi
grep -q "ERROR:  output table public.busy_out_info is being written by another session" "$TMP/pp.log" \
  || { cat "$TMP/pp.log" >&2; fail "unexpected error for preprocess"; }
q -c "CREATE TABLE busy_out_hops (note text)"
[ "$(q -A -t -c "SELECT state FROM hopper.runs WHERE name = 'busy'")" = ACTIVE ] \
  || fail "the run ended before the test could create a table of its name (a machine this fast needs more iterations)"
if wait "$busy"; then fail "the run wrote its outputs over a table created meanwhile"; fi
grep -q "ERROR:  hops table public.busy_out_hops was created while the run trained" "$TMP/busy.log" \
  || { cat "$TMP/busy.log" >&2; fail "unexpected error at the run's end"; }
actual=$(q -A -t -c "SELECT r.state || '|' || pg_catalog.max(c.iteration) FROM hopper.runs r
                     JOIN hopper.checkpoints_expanded c USING (run_id) WHERE r.name = 'busy' GROUP BY r.state")
[ "$actual" = "INTERRUPTED|1500" ] || fail "expected the run INTERRUPTED with its checkpoint of iteration 1500, got $actual"
[ "$(q -A -t -c "SELECT count(*) FROM pg_class WHERE relname LIKE 'busy_out%'")" = 1 ] || fail "the run left outputs"

# The locks of claims and runs are in a class of hopper's own, which pg_advisory_lock cannot take:
# another role holding the advisory locks with the same keys (the output's name hashed, the next run
# ids, the id of an interrupted run) neither blocks a run nor makes an interrupted one read ACTIVE.
q >/dev/null <<'SQL'
DROP ROLE IF EXISTS hopper_claim_squatter;
CREATE ROLE hopper_claim_squatter LOGIN;
SQL
next_run=$(q -A -t -c "SELECT pg_catalog.max(run_id) + 1 FROM hopper.runs")
busy_run=$(q -A -t -c "SELECT run_id FROM hopper.runs WHERE name = 'busy'")
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -U hopper_claim_squatter \
  -c "SELECT pg_advisory_lock(1213222705, hashtext('public.squatted_out')),
         pg_advisory_lock('public'::regnamespace::oid::int8::int4, hashtext('squatted_out')), pg_advisory_lock(1213223473, $busy_run)" \
  -c "SELECT count(pg_advisory_lock(1213223473, r::int4)) FROM generate_series($next_run, $next_run + 20) r" \
  -c "SELECT pg_sleep(60) AS squatting" >/dev/null 2>&1 &
squatter=$!
wait_sleeping squatting
q -c "SET client_min_messages = warning" -c "CALL hopper.fit('packed', 'squatted_out', '$ARCH', '', '', 1, name => 'squatted')" \
  >"$TMP/sq.log" 2>&1 || { cat "$TMP/sq.log" >&2; fail "another role's advisory locks blocked a run"; }
[ "$(q -A -t -c "SELECT state FROM hopper.runs WHERE run_id = $busy_run")" = INTERRUPTED ] \
  || fail "another role's advisory lock made an interrupted run read ACTIVE"
cancel_sleeping squatting
wait "$squatter" 2>/dev/null || true
q -c "DROP ROLE hopper_claim_squatter" >/dev/null

# A claim is keyed by the schema and a hash of the table's name. Keyed by a 32-bit hash of
# "schema.name", a role found in a minute a name of its own schema whose claim blocked another role's
# output in a schema it cannot write to: holder.c3b620fa9 and claim.m9 have the same hashtext. Session
# A holds the claim of holder.c3b620fa9 (preprocess in an open transaction) while B trains into
# claim.m9.
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE SCHEMA claim;
CREATE SCHEMA holder;
SQL
[ "$(q -A -t -c "SELECT hashtext('holder.c3b620fa9') = hashtext('claim.m9')")" = t ] \
  || fail "the names of this test no longer collide in hashtext"
q -c "BEGIN" -c "SELECT hopper.preprocess('points', 'holder.c3b620fa9', 'label', 'x', buffer_size => 50)" \
  -c "SELECT pg_sleep(60) AS holding_claim" >/dev/null 2>&1 &
holder=$!
wait_sleeping holding_claim
q -c "SET client_min_messages = warning" -c "CALL hopper.fit('packed', 'claim.m9', '$ARCH', '', '', 1)" >"$TMP/coll.log" 2>&1 \
  || { cat "$TMP/coll.log" >&2; fail "a claim in another schema with a colliding hash blocked a run"; }
cancel_sleeping holding_claim
wait "$holder" 2>/dev/null || true

# load_model_arch writes only an architecture table the caller owns, and says so before it waits for
# the table: another role holding a lock on its own table made the call queue behind it (the lock was
# taken first, the owner checked after).
q >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP ROLE IF EXISTS hopper_claim_arch_owner;
DROP ROLE IF EXISTS hopper_claim_arch_caller;
CREATE ROLE hopper_claim_arch_owner;
CREATE ROLE hopper_claim_arch_caller;
CREATE SCHEMA arch_owner AUTHORIZATION hopper_claim_arch_owner;
GRANT USAGE ON SCHEMA arch_owner, hopper TO hopper_claim_arch_caller;
GRANT USAGE ON SCHEMA hopper TO hopper_claim_arch_owner;
SET ROLE hopper_claim_arch_owner;
SELECT hopper.load_model_arch('arch_owner.archs', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}');
GRANT ALL ON arch_owner.archs TO PUBLIC;
SQL
q -c "SET ROLE hopper_claim_arch_owner" -c "BEGIN" -c "LOCK TABLE arch_owner.archs IN ACCESS EXCLUSIVE MODE"   -c "SELECT pg_sleep(60) AS holding_archs" >/dev/null 2>&1 &
arch_holder=$!
wait_sleeping holding_archs
out=$(q -c "SET ROLE hopper_claim_arch_caller" -c "SET lock_timeout = '5s'"   -c "SELECT hopper.load_model_arch('arch_owner.archs', '{\"input_dim\": 2, \"layers\": [{\"units\": 3, \"activation\": \"softmax\"}]}')" 2>&1 || true)
cancel_sleeping holding_archs
wait "$arch_holder" 2>/dev/null || true
echo "$out" | grep -q "changes only a model architecture table the caller owns" \
  || fail "load_model_arch on another role's locked table: $out"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP SCHEMA arch_owner CASCADE;
REVOKE USAGE ON SCHEMA hopper FROM hopper_claim_arch_caller, hopper_claim_arch_owner;
DROP ROLE hopper_claim_arch_owner;
DROP ROLE hopper_claim_arch_caller;
SQL

echo "output_claim: ok"
