#!/usr/bin/env bash
# The registry under concurrency, with two real sessions (separate psql processes) per case, each
# case repeated REPS times (default 20):
#   1. simultaneous registrations into one model get n and n+1 (released together from a gate, and
#      with a forced overlap: the second waits on the first's row lock), under READ COMMITTED;
#      under REPEATABLE READ the overlapping one is refused with 40001, never given a duplicate;
#   2. archive vs register, both orders, READ COMMITTED and REPEATABLE READ: a version is never
#      added to an archived model;
#   3. register vs delete of the same checkpoint, both orders, READ COMMITTED and REPEATABLE READ:
#      one of the two is refused with a clear error, and a registered checkpoint keeps its payload;
#   4. list_checkpoints while another session inserts checkpoints in batches of 5: every page's
#      total agrees with the page and is a whole number of batches (one snapshot);
#   5. two sessions creating the same model name: one model, one clean 42710;
#   6. case 3 between two unprivileged roles: one registers the other's checkpoint (its row locked
#      as hopper's owner, the checkpoints' UPDATE policy being the owner's) while the owner deletes it;
#   7. a role holding SELECT ... FOR UPDATE (and FOR KEY SHARE) on another role's checkpoints in an
#      open transaction locks none of them: the owner deletes, registers and warm-starts from its
#      checkpoints under lock_timeout without waiting (that policy was open to every role, and one
#      such statement stalled every role's deletions, registrations and warm starts); a warm start
#      does not wait for another role's registration of its checkpoint in progress either.
# Orchestration: a controller session holds an advisory lock (the gate); a worker that must stay
# inside its transaction waits for that lock; the controller releases it only once the other worker
# is seen waiting on a row or transaction lock in pg_locks. No sleep orders anything: the controller
# only polls pg_locks until the state it waits for is there.
# Needs PGHOST/PGPORT/PGUSER of a cluster with hopper installed (test/run-all.sh sets them).
set -euo pipefail

REPS=${REPS:-20}
DB=hopper_registry_concurrency
ALICE=hopper_conc_alice
BOB=hopper_conc_bob
WORK=$(mktemp -d /tmp/hopper-registry-conc.XXXXXX)
export PGDATABASE=$DB
FAILURES=0

psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

cleanup() {
  local rc=$?
  if [ -n "${CTL_PID:-}" ]; then
    kill "$CTL_PID" 2>/dev/null || true
    wait "$CTL_PID" 2>/dev/null || true
  fi
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "DROP ROLE IF EXISTS $ALICE" -c "DROP ROLE IF EXISTS $BOB" \
    >/dev/null 2>&1 || true
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  FAILURES=$((FAILURES + 1))
}

# ---- the controller session and its gate -------------------------------------------------
ctl() {
  echo "$1; SELECT 'ctl-done';" >&"${CTL[1]}"
  local line
  while read -r -t 30 line <&"${CTL[0]}"; do
    [ "$line" = ctl-done ] && return 0
  done
  echo "controller did not answer: $1" >&2
  exit 1
}
close_gate() { ctl "SELECT pg_advisory_lock(4242)"; }
open_gate() { ctl "SELECT pg_advisory_unlock(4242)"; }

# The controller polls pg_locks (in the server, a millisecond apart) until the named worker waits
# on the gate (advisory lock) or on a row or transaction lock; it gives up after 30 s.
wait_for_wait() {
  echo "SELECT wait_for_wait('$1', $2); SELECT 'ctl-done';" >&"${CTL[1]}"
  local line result=""
  while read -r -t 60 line <&"${CTL[0]}"; do
    [ "$line" = ctl-done ] && break
    result=$line
  done
  [ "$result" = t ] || { echo "timed out waiting for $1 to wait on a lock" >&2; exit 1; }
}
waiting_on_gate() { wait_for_wait "$1" true; }
waiting_on_lock() { wait_for_wait "$1" false; }

# A worker: a psql process named $1 running the -c commands that follow; its output (with the
# SQLSTATE of an error) goes to $WORK/$1.out and its exit status to $WORK/$1.rc.
worker() {
  local name=$1
  shift
  local args=()
  for c in "$@"; do args+=(-c "$c"); done
  ( set +e
    PGAPPNAME=$name psql -X -q -At -v ON_ERROR_STOP=1 -v VERBOSITY=verbose "${args[@]}" >"$WORK/$name.out" 2>&1
    echo $? >"$WORK/$name.rc" ) &
  WORKERS+=($!)
}
WORKERS=()
# Waits for the workers (not for the controller, which runs until the end).
finish() {
  local p
  for p in "${WORKERS[@]}"; do wait "$p"; done
  WORKERS=()
}
rc() { cat "$WORK/$1.rc"; }
out() { cat "$WORK/$1.out"; }
sqlstate_of() { { grep -o 'ERROR:  [0-9A-Z]\{5\}' "$WORK/$1.out" || true; } | head -1 | cut -c9-; }
# "ok" when the worker succeeded, else the SQLSTATE of its error.
outcome() { if [ "$(rc "$1")" = 0 ]; then echo ok; else sqlstate_of "$1"; fi; }

begin_for() { [ "$1" = rr ] && echo "BEGIN ISOLATION LEVEL REPEATABLE READ" || echo "BEGIN"; }

# ---- setup -----------------------------------------------------------------------------------
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS $ALICE" -c "DROP ROLE IF EXISTS $BOB" \
  -c "CREATE ROLE $ALICE" -c "CREATE ROLE $BOB" >/dev/null
psql_q <<'SQL' >/dev/null
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE pts AS SELECT g AS id, ARRAY[g % 2, (g + 1) % 2]::float8[] AS x, (g % 2)::text AS label
FROM generate_series(1, 40) g;
SELECT hopper.preprocess('pts', 'pts_packed', 'label', 'x', buffer_size => 20, num_segments => 1);
CALL hopper.fit('pts_packed', 'm', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}', '', '', 1,
                checkpoint_frequency => 0);
-- Whether the session named app waits on an advisory lock (or, advisory = false, on another lock).
CREATE FUNCTION wait_for_wait(app text, advisory boolean) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..30000 LOOP
    PERFORM pg_stat_clear_snapshot();
    IF EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
               WHERE a.application_name = app AND NOT l.granted AND (l.locktype = 'advisory') = advisory) THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.001);
  END LOOP;
  RETURN false;
END $$;
-- A fresh COMPLETED checkpoint of the tiny model.
CREATE FUNCTION new_checkpoint() RETURNS uuid LANGUAGE sql AS
  $$ SELECT hopper.create_checkpoint(model_state) FROM m $$;
SQL
psql_q >/dev/null <<SQL
-- Two unprivileged roles (cases 6 and 7): each writes checkpoints of its own and trains into its own schema.
GRANT USAGE ON SCHEMA hopper TO $ALICE, $BOB;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO $ALICE, $BOB;
CREATE SCHEMA conc_alice AUTHORIZATION $ALICE;
SQL

coproc CTL { psql -X -q -At 2>&1; }
CTL_PID=$!

# ---- 1. simultaneous registrations ----------------------------------------------------------
psql_q -c "SELECT hopper.create_model('simultaneous')" >/dev/null
expected=0
for rep in $(seq 1 "$REPS"); do
  # Released together from the gate.
  close_gate
  worker r1 "SELECT pg_advisory_lock_shared(4242)" "SELECT hopper.register_model_version('simultaneous', new_checkpoint())"
  worker r2 "SELECT pg_advisory_lock_shared(4242)" "SELECT hopper.register_model_version('simultaneous', new_checkpoint())"
  waiting_on_gate r1
  waiting_on_gate r2
  open_gate
  finish
  [ "$(rc r1)" = 0 ] && [ "$(rc r2)" = 0 ] || fail "simultaneous registration failed: $(out r1) $(out r2)"
  v1=$(tail -1 "$WORK/r1.out"); v2=$(tail -1 "$WORK/r2.out")
  expected=$((expected + 2))
  [ "$(printf '%s\n%s\n' "$v1" "$v2" | sort -n | tr '\n' ' ')" = "$((expected - 1)) $expected " ] \
    || fail "released together: versions $v1 and $v2, expected $((expected - 1)) and $expected"

  # Forced overlap: r2 registers while r1's registration holds the model's row lock.
  close_gate
  worker r1 "BEGIN" "SELECT hopper.register_model_version('simultaneous', new_checkpoint())" \
            "SELECT pg_advisory_xact_lock(4242)" "COMMIT"
  waiting_on_gate r1
  worker r2 "SELECT hopper.register_model_version('simultaneous', new_checkpoint())"
  waiting_on_lock r2
  open_gate
  finish
  expected=$((expected + 2))
  [ "$(rc r1)" = 0 ] && [ "$(rc r2)" = 0 ] || fail "overlapping registration failed: $(out r1) $(out r2)"
  [ "$(head -1 "$WORK/r1.out")" = $((expected - 1)) ] && [ "$(tail -1 "$WORK/r2.out")" = "$expected" ] \
    || fail "overlap: versions $(head -1 "$WORK/r1.out") and $(tail -1 "$WORK/r2.out"), expected $((expected - 1)) and $expected"

  # Under REPEATABLE READ the overlapping registration cannot see the first one's number: refused.
  close_gate
  worker r1 "BEGIN" "SELECT hopper.register_model_version('simultaneous', new_checkpoint())" \
            "SELECT pg_advisory_xact_lock(4242)" "COMMIT"
  waiting_on_gate r1
  worker r2 "BEGIN ISOLATION LEVEL REPEATABLE READ" \
            "SELECT hopper.register_model_version('simultaneous', new_checkpoint())" "COMMIT"
  waiting_on_lock r2
  open_gate
  finish
  expected=$((expected + 1))
  [ "$(rc r1)" = 0 ] && [ "$(sqlstate_of r2)" = 40001 ] || fail "repeatable read overlap: $(out r1) / $(out r2)"
done
check=$(psql_q -c "SELECT count(*) = $expected AND count(DISTINCT version) = count(*) AND max(version) = $expected
                           AND (SELECT next_version FROM hopper.models WHERE name = 'simultaneous') = $expected + 1
                    FROM hopper.model_versions v JOIN hopper.models m USING (model_id) WHERE m.name = 'simultaneous'")
[ "$check" = t ] || fail "simultaneous: versions are not exactly 1..$expected"
echo "ok 1 - simultaneous registrations: $REPS x (released together, forced overlap, repeatable read overlap)"

# ---- 2. archive vs register ----------------------------------------------------------------
psql_q -c "SELECT hopper.create_model('archived')" >/dev/null
for iso in rc rr; do
  for rep in $(seq 1 "$REPS"); do
    # (a) the archive commits while the registration waits: the registration is refused.
    psql_q -c "SELECT hopper.unarchive_model('archived')" >/dev/null
    before=$(psql_q -c "SELECT count(*) FROM hopper.model_versions v JOIN hopper.models m USING (model_id) WHERE m.name = 'archived'")
    close_gate
    worker a "BEGIN" "SELECT hopper.archive_model('archived')" "SELECT pg_advisory_xact_lock(4242)" "COMMIT"
    waiting_on_gate a
    worker b "$(begin_for $iso)" "SELECT hopper.register_model_version('archived', new_checkpoint())" "COMMIT"
    waiting_on_lock b
    open_gate
    finish
    want=55000; [ $iso = rr ] && want=40001
    [ "$(rc a)" = 0 ] && [ "$(sqlstate_of b)" = $want ] || fail "archive then register ($iso): $(out a) / $(out b)"
    [ $iso = rc ] && ! grep -q 'model "archived" is archived' "$WORK/b.out" && fail "archive then register: unclear error: $(out b)"
    after=$(psql_q -c "SELECT count(*) FROM hopper.model_versions v JOIN hopper.models m USING (model_id) WHERE m.name = 'archived'")
    [ "$before" = "$after" ] || fail "archive then register ($iso): a version was added to an archived model"

    # (b) the registration commits while the archive waits: both succeed, in that order.
    psql_q -c "SELECT hopper.unarchive_model('archived')" >/dev/null
    close_gate
    worker a "BEGIN" "SELECT hopper.register_model_version('archived', new_checkpoint())" \
             "SELECT pg_advisory_xact_lock(4242)" "COMMIT"
    waiting_on_gate a
    worker b "$(begin_for $iso)" "SELECT hopper.archive_model('archived')" "COMMIT"
    waiting_on_lock b
    open_gate
    finish
    if [ $iso = rc ]; then
      [ "$(rc a)" = 0 ] && [ "$(rc b)" = 0 ] || fail "register then archive (rc): $(out a) / $(out b)"
    else
      [ "$(rc a)" = 0 ] && [ "$(sqlstate_of b)" = 40001 ] || fail "register then archive (rr): $(out a) / $(out b)"
    fi
  done
done
check=$(psql_q -c "SELECT count(DISTINCT version) = count(*) FROM hopper.model_versions v JOIN hopper.models m USING (model_id)
                   WHERE m.name = 'archived'")
[ "$check" = t ] || fail "archive vs register: duplicate version numbers"
echo "ok 2 - archive vs register: $REPS x 2 orders x (read committed, repeatable read)"

# ---- 3. register vs delete of one checkpoint ------------------------------------------------------
# A registration (by `registrar`, into its model `model`) of a checkpoint `owner` made, against the
# owner's deletion of it: both orders, REPS times under each isolation level. `what` names the case
# in failures. Case 6 runs it between two roles.
register_against_delete() {
  local model=$1 owner=$2 registrar=$3 what=$4 iso rep ck want state n
  for iso in rc rr; do
    for rep in $(seq 1 "$REPS"); do
      # (a) registration first: the deletion is refused and the payload stays.
      ck=$(psql_q -c "SET ROLE $owner" -c "SELECT new_checkpoint()")
      close_gate
      worker a "SET ROLE $registrar" "BEGIN" "SELECT hopper.register_model_version('$model', '$ck')" \
               "SELECT pg_advisory_xact_lock(4242)" "COMMIT"
      waiting_on_gate a
      worker b "SET ROLE $owner" "$(begin_for $iso)" "SELECT hopper.delete_checkpoints(ARRAY['$ck'::uuid])" "COMMIT"
      waiting_on_lock b
      open_gate
      finish
      want=55006; [ $iso = rr ] && want=40001
      [ "$(rc a)" = 0 ] && [ "$(sqlstate_of b)" = $want ] || fail "$what: register then delete ($iso): $(out a) / $(out b)"
      [ $iso = rc ] && ! grep -q 'is registered as a model version' "$WORK/b.out" && fail "$what: register then delete: unclear error: $(out b)"
      state=$(psql_q -c "SELECT state || '/' || (SELECT count(*) FROM hopper.checkpoint_chunks k WHERE k.checkpoint_id = c.checkpoint_id)
                         FROM hopper.checkpoints c WHERE uuid = '$ck'")
      [ "$state" = COMPLETED/1 ] || fail "$what: register then delete ($iso): the registered checkpoint is $state"
      [ "$(psql_q -c "SELECT length(hopper.checkpoint_state('$ck')) > 0")" = t ] || fail "$what: registered checkpoint unreadable"

      # (b) deletion first: the registration is refused.
      ck=$(psql_q -c "SET ROLE $owner" -c "SELECT new_checkpoint()")
      close_gate
      worker a "SET ROLE $owner" "BEGIN" "SELECT hopper.delete_checkpoints(ARRAY['$ck'::uuid])" \
               "SELECT pg_advisory_xact_lock(4242)" "COMMIT"
      waiting_on_gate a
      worker b "SET ROLE $registrar" "$(begin_for $iso)" "SELECT hopper.register_model_version('$model', '$ck')" "COMMIT"
      waiting_on_lock b
      open_gate
      finish
      want=55000; [ $iso = rr ] && want=40001
      [ "$(rc a)" = 0 ] && [ "$(sqlstate_of b)" = $want ] || fail "$what: delete then register ($iso): $(out a) / $(out b)"
      [ $iso = rc ] && ! grep -q 'is DELETED' "$WORK/b.out" && fail "$what: delete then register: unclear error: $(out b)"
      n=$(psql_q -c "SELECT count(*) FROM hopper.model_versions v JOIN hopper.checkpoints c USING (checkpoint_id) WHERE c.uuid = '$ck'")
      [ "$n" = 0 ] || fail "$what: delete then register ($iso): a deleted checkpoint was registered"
    done
  done
}
psql_q -c "SELECT hopper.create_model('guarded')" >/dev/null
register_against_delete guarded "$PGUSER" "$PGUSER" "one role"
check=$(psql_q -c "SELECT count(*) FROM hopper.model_versions v JOIN hopper.checkpoints c USING (checkpoint_id)
                   WHERE c.state <> 'COMPLETED'
                      OR NOT EXISTS (SELECT 1 FROM hopper.checkpoint_chunks k WHERE k.checkpoint_id = c.checkpoint_id)")
[ "$check" = 0 ] || fail "register vs delete: $check versions point at checkpoints that are not whole"
echo "ok 3 - register vs delete: $REPS x 2 orders x (read committed, repeatable read)"

# ---- 4. listing with a total while another session inserts ------------------------------------
task=$(psql_q -c "SELECT hopper.create_task('IMPORT', 'concurrency test writer')")
psql_q -c "CREATE FUNCTION list_check(p_size int, p_offset int, base bigint, final bigint) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE n bigint; lo bigint; hi bigint; bad text := ''; seen bigint[] := '{}'; rounds int := 0;
BEGIN
  -- Pages until the writer's last batch is visible (each statement sees the commits before it).
  LOOP
    rounds := rounds + 1;
    SELECT count(*), min(total_count), max(total_count) INTO n, lo, hi
    FROM hopper.list_checkpoints(states => ARRAY['COMPLETED'], order_by => 'report_time', page_size => p_size, page_offset => p_offset);
    IF n = 0 OR lo <> hi OR (lo - base) % 5 <> 0 OR n <> least(p_size, lo - p_offset) THEN
      bad := bad || format('page of %s rows with totals %s..%s; ', n, lo, hi);
    END IF;
    IF NOT lo = ANY (seen) THEN seen := seen || lo; END IF;
    EXIT WHEN lo >= final OR rounds >= 100000;
  END LOOP;
  RETURN CASE WHEN bad = '' THEN 'consistent ' || cardinality(seen) ELSE bad END;
END \$\$" >/dev/null
interleaved=0
for rep in $(seq 1 "$REPS"); do
  base=$(psql_q -c "SELECT count(*) FROM hopper.checkpoints WHERE state = 'COMPLETED'")
  close_gate
  writes=()
  for b in 1 2 3 4 5; do
    writes+=("SELECT count(hopper.create_checkpoint(model_state, $task)) FROM m, generate_series(1, 5)")
  done
  worker w "SELECT pg_advisory_lock_shared(4242)" "${writes[@]}"
  worker l "SELECT pg_advisory_lock_shared(4242)" "SELECT list_check(7, $((rep % 4)), $base, $((base + 25)))"
  waiting_on_gate w
  waiting_on_gate l
  open_gate
  finish
  [ "$(rc w)" = 0 ] || fail "writer failed: $(out w)"
  result=$(tail -1 "$WORK/l.out")
  case "$result" in
    "consistent 1") ;;
    consistent*) interleaved=$((interleaved + 1)) ;;
    *) fail "list with total: $(out l)" ;;
  esac
  after=$(psql_q -c "SELECT count(*) FROM hopper.checkpoints WHERE state = 'COMPLETED'")
  [ "$after" = $((base + 25)) ] || fail "writer wrote $((after - base)) checkpoints, expected 25"
done
# The reader pages from the moment both are released until the last batch is visible, so it sees
# the writer's commits land; if it never did, the test tested nothing.
[ "$interleaved" -gt 0 ] || fail "list with total: the reader never saw a write land while it paged"
echo "ok 4 - list_checkpoints page and total agree while another session inserts: $REPS x (reads interleaved with writes in $interleaved)"

# ---- 5. the same model name twice at once ---------------------------------------------------------
for rep in $(seq 1 "$REPS"); do
  close_gate
  worker c1 "SELECT pg_advisory_lock_shared(4242)" "SELECT hopper.create_model('same-name-$rep')"
  worker c2 "SELECT pg_advisory_lock_shared(4242)" "SELECT hopper.create_model('SAME-NAME-$rep')"
  waiting_on_gate c1
  waiting_on_gate c2
  open_gate
  finish
  states="$(outcome c1)/$(outcome c2)"
  case "$states" in
    "ok/42710" | "42710/ok") ;;
    *) fail "create_model twice: $(out c1) / $(out c2)" ;;
  esac
done
n=$(psql_q -c "SELECT count(*) FROM hopper.models WHERE name ILIKE 'same-name-%'")
[ "$n" = "$REPS" ] || fail "create_model twice: $n models for $REPS names"
echo "ok 5 - the same model name created twice at once: $REPS x one model and one 42710"

# ---- 6. another role's registration vs the owner's deletion ----------------------------------------
psql_q -c "SET ROLE $BOB" -c "SELECT hopper.create_model('shared')" >/dev/null
register_against_delete shared "$ALICE" "$BOB" "Bob's registration of Alice's checkpoint"
echo "ok 6 - another role's registration vs the owner's deletion: $REPS x 2 orders x (read committed, repeatable read)"

# ---- 7. another role's row locks on one's checkpoints -----------------------------------------------
psql_q -c "SET ROLE $ALICE" -c "SELECT hopper.create_model('alice-own')" >/dev/null
# A checkpoint of a training run of Alice's, to warm-start from.
ARCH='{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}'
base=$(psql_q -c "SET ROLE $ALICE" -c "SET client_min_messages = warning" \
         -c "CALL hopper.fit('pts_packed', 'conc_alice.base', '$ARCH', '', '', 1, name => 'alice base')" \
         -c "SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'alice base'")
# Bob holds, in an open transaction: a row lock of every checkpoint of Alice's (which the UPDATE
# policy now filters to none of them), or the lock his registration of her checkpoint takes (NO KEY
# UPDATE, which a warm start's foreign key does not wait for).
for hold in "FOR UPDATE" "FOR KEY SHARE" "register"; do
  gone=$(psql_q -c "SET ROLE $ALICE" -c "SELECT new_checkpoint()")
  mine=$(psql_q -c "SET ROLE $ALICE" -c "SELECT new_checkpoint()")
  if [ "$hold" = register ]; then
    held="SELECT hopper.register_model_version('shared', '$base')"
  else
    held="SELECT count(*) FROM (SELECT 1 FROM hopper.checkpoints WHERE owner = '$ALICE' $hold) s"
  fi
  close_gate
  worker h "SET ROLE $BOB" "BEGIN" "$held" "SELECT pg_advisory_xact_lock(4242)" "COMMIT"
  waiting_on_gate h
  if [ "$hold" = register ]; then
    owner_does=("CALL hopper.fit('pts_packed', 'conc_alice.warm', '$ARCH', '', '', 1, checkpoint_frequency => 0, warm_start_checkpoint => '$base')")
  else
    owner_does=("SELECT hopper.delete_checkpoints(ARRAY['$gone'::uuid])"
                "SELECT hopper.register_model_version('alice-own', '$mine')"
                "CALL hopper.fit('pts_packed', 'conc_alice.warm', '$ARCH', '', '', 1, checkpoint_frequency => 0, warm_start_checkpoint => '$base')")
  fi
  worker o "SET ROLE $ALICE" "SET lock_timeout = '3s'" "SET client_min_messages = warning" "${owner_does[@]}" "SELECT 'owner-done'"
  # The owner finishes while Bob's transaction is still open (the gate still closed): nothing waited.
  wait "${WORKERS[1]}"
  WORKERS=("${WORKERS[0]}")
  [ "$(outcome o)" = ok ] && grep -q owner-done "$WORK/o.out" \
    || fail "the owner's deletion, registration or warm start waited on another role's $hold: $(out o)"
  open_gate
  finish
  [ "$(rc h)" = 0 ] || fail "another role's $hold failed: $(out h)"
  [ "$hold" = register ] || [ "$(head -1 "$WORK/h.out")" = 0 ] \
    || fail "another role locked $(head -1 "$WORK/h.out") of the owner's checkpoints $hold"
  psql_q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS conc_alice.warm, conc_alice.warm_summary, conc_alice.warm_info" >/dev/null
done
echo "ok 7 - another role's SELECT ... FOR UPDATE / FOR KEY SHARE locks none of the owner's checkpoints: deletion, registration and warm start do not wait; nor does a warm start from a checkpoint another role is registering"

if [ "$FAILURES" -gt 0 ]; then
  echo "registry concurrency: $FAILURES failures" >&2
  exit 1
fi
echo "registry concurrency: all passed"
