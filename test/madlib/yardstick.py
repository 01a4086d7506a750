#!/usr/bin/env python3
r"""The MADlib yardstick: Apache MADlib's own deep-learning examples and tests, run unchanged on hopper_madlib.

Called by test/scripts/madlib_yardstick.sh (which checks the environment); see docs/madlib.md.

Documentation examples: extract_examples.py takes the SQL examples of each user doc
(deep_learning/*.sql_in); they run in document order (later ones use earlier ones' tables), each in
its own psql (-X, ON_ERROR_STOP), in one throwaway database. psql's \x state carries from one
example of a doc to the next, as in the one session the docs assume. Each example is then
  match      ran, and its output has MADlib's documented shape: every table MADlib shows for it
             (in order) has a counterpart in psql's output with each documented column, under that
             name, and the same number of rows ("..." in the docs: at least as many). Values are not
             compared: they come from training (and clocks, versions, random splits);
  difference ran, output not of that shape, and the example is listed in differences.txt with why;
  differs    ran, output not of that shape, not listed (a regression of the yardstick);
  failed     psql stopped on an error (the first ERROR is reported).
Test files: deep_learning/test/*.sql_in but the *.setup.sql_in they include, through m4 as
MADlib's harness (madpack install-check) does, each in a fresh database with MADlib's
install-check search_path, psql ON_ERROR_STOP: passed, failed (first ERROR), or empty (MADlib's m4
conditions leave nothing to run on PostgreSQL: a Greenplum-only file). A test file may fail only where
differences.txt lists it (`test:<file> <why>`: those that need MADlib's Python internals); any other
failure is a regression, and the yardstick exits non-zero. harness.sql gives
them the assertion helpers MADlib's utilities module would (assert, trap_error, ...), written anew.
Both run where madpack would have installed MADlib: with its PL/Python language plpythonu (plpythonu.sql).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# The user docs, each's examples in document order; the docs in an order in which one's examples find
# the tables another's made (keras_model_arch_table's use madlib_keras's iris_model, model_selection's
# object_table the custom_function_table of custom_function's top-k accuracy functions).
DOCS = ['input_data_preprocessor', 'madlib_keras', 'keras_model_arch_table', 'madlib_keras_custom_function',
        'madlib_keras_model_selection', 'madlib_keras_fit_multiple_model', 'madlib_keras_automl', 'madlib_keras_gpu_info']
TIMEOUT = int(os.environ.get('HOPPER_MADLIB_TIMEOUT', '900'))
PSQL = os.path.join(os.environ.get('PG_BIN', ''), 'psql') if os.environ.get('PG_BIN') else 'psql'


def psql(db, args, stdin=None, timeout=TIMEOUT):
    cmd = [PSQL, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-P', 'pager=off', '-d', db] + args
    try:
        p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return 124, e.stdout or '', 'ERROR:  timed out after %d s' % timeout


def admin(sql):
    rc, out, err = psql('postgres', ['-c', sql])
    if rc:
        sys.exit('yardstick: %s: %s' % (sql, err))


def fresh_db(name):
    admin('DROP DATABASE IF EXISTS %s' % name)
    admin('CREATE DATABASE %s' % name)
    rc, out, err = psql(name, ['-c', 'SET client_min_messages = warning',
                               '-c', 'CREATE EXTENSION hopper CASCADE', '-c', 'CREATE EXTENSION hopper_madlib',
                               '-f', os.path.join(HERE, 'plpythonu.sql')])
    if rc:
        sys.exit('yardstick: cannot create the extensions: ' + err)


def tables(text):
    """psql output (aligned or expanded, as MADlib's docs print it) as [(columns, rows, open_ended)]."""
    lines = text.splitlines()
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.match(r'^-\[ RECORD \d+ \]', line):
            cols, records, open_ended = [], 0, False
            while i < len(lines) and (re.match(r'^-\[ RECORD \d+ \]', lines[i]) or '|' in lines[i]
                                      or lines[i].strip() in ('...', '[...]')):
                l = lines[i]
                if l.startswith('-[ RECORD'):
                    records += 1
                elif l.strip() in ('...', '[...]'):
                    open_ended = True
                elif records == 1:
                    name = l.split('|', 1)[0].strip()
                    if name:
                        cols.append(name)
                i += 1
            out.append((cols, records, open_ended))
            continue
        if i + 1 < len(lines) and re.match(r'^\s*-{2,}[-+]*\s*$', lines[i + 1]) and line.strip():
            cols = [c.strip() for c in line.split('|')]
            rows, open_ended, cont = 0, False, False
            i += 2
            while i < len(lines):
                l = lines[i]
                if not l.strip() or re.match(r'^\(\d+ rows?\)$', l.strip()):
                    break
                if re.match(r'^\s*\.\.\.\s*$', l) or re.match(r'^\s*\[?\.\.\.\]?\s*(\|.*)?$', l):
                    open_ended = True
                elif not cont:
                    rows += 1
                cont = l.rstrip().endswith('+')
                i += 1
            out.append((cols, rows, open_ended))
            continue
        i += 1
    return out


def same_shape(expected, actual):
    """Every documented table, in order, has a counterpart in the actual output (see the module doc)."""
    j = 0
    for cols, rows, open_ended in expected:
        want = [c.lower() for c in cols if c]
        while j < len(actual):
            acols, arows, _ = actual[j]
            j += 1
            have = {c.lower() for c in acols}
            if all(c in have for c in want) and (arows == rows or (open_ended and arows >= rows)):
                break
        else:
            return False
    return True


def describe(expected, actual):
    exp = '; '.join('%s x %d%s' % (','.join(c), r, '+' if o else '') for c, r, o in expected)
    act = '; '.join('%s x %d' % (','.join(c), r) for c, r, _ in actual)
    return 'documented [%s] got [%s]' % (exp, act)


def load_differences():
    diffs = {}
    with open(os.path.join(HERE, 'differences.txt'), encoding='utf-8') as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith('#'):
                key, reason = line.split(None, 1)
                diffs[key] = reason
    return diffs


def first_error(err):
    for l in err.splitlines():
        if 'ERROR' in l:
            return l.strip()
    return (err.strip().splitlines() or ['exit status without message'])[-1]


def run_docs(src, work, report):
    diffs = load_differences()
    counts = {'match': 0, 'difference': 0, 'differs': 0, 'failed': 0}
    dl = os.path.join(src, 'src/ports/postgres/modules/deep_learning')
    db = 'hopper_madlib_yardstick'
    fresh_db(db)
    for doc in DOCS:
        exdir = os.path.join(work, 'examples', doc)
        subprocess.run([sys.executable, os.path.join(HERE, 'extract_examples.py'),
                        os.path.join(dl, doc + '.sql_in'), exdir], check=True, capture_output=True)
        expanded = False
        for name in sorted(f for f in os.listdir(exdir) if f.endswith('.sql')):
            key = '%s/%s' % (doc, name[:-4])
            with open(os.path.join(exdir, name), encoding='utf-8') as f:
                sql = f.read()
            rc, out, err = psql(db, [], stdin=('\\x on\n' if expanded else '\\x off\n') + sql)
            for m in re.finditer(r'^\s*\\x(\s+(on|off))?\s*$', sql, re.MULTILINE):
                expanded = (m.group(2) == 'on') if m.group(2) else not expanded
            expf = os.path.join(exdir, name[:-4] + '.expected')
            expected = []
            if os.path.exists(expf):
                with open(expf, encoding='utf-8') as f:
                    expected = tables(f.read())
            with open(os.path.join(exdir, name[:-4] + '.out'), 'w', encoding='utf-8') as f:
                f.write(out + err)
            if rc:
                verdict, why = 'failed', first_error(err)
            elif same_shape(expected, tables(out)):
                verdict, why = 'match', ''
            elif key in diffs:
                verdict, why = 'difference', diffs[key]
            else:
                verdict, why = 'differs', describe(expected, tables(out))
            counts[verdict] += 1
            report.append('example %-50s %-10s %s' % (key, verdict, why))
            print(report[-1], flush=True)
    admin('DROP DATABASE IF EXISTS hopper_madlib_yardstick')
    return counts


def run_tests(src, work, report, only=None):
    diffs = load_differences()
    counts = {'passed': 0, 'failed': 0, 'empty': 0, 'unlisted': 0}
    if not shutil.which('m4'):
        report.append('tests: SKIP (no m4: MADlib\'s test files are m4 input)')
        print(report[-1])
        return counts
    root = os.path.join(src, 'src/ports/postgres/modules')
    # MADLIB_LIBRARY_PATH: the tests include <its parent>/../modules/deep_learning/test/*.setup.sql_in.
    lib = os.path.join(work, 'ports', 'lib')
    os.makedirs(lib, exist_ok=True)
    # SQLCommon.m4, which the tests include: madpack makes it from SQLCommon.m4_in, putting the build's
    # m4 definitions (none needed here) in place of @M4_DEFINES_CODE@.
    with open(os.path.join(src, 'src/ports/postgres/madpack/SQLCommon.m4_in'), encoding='utf-8') as f:
        common = f.read().replace('@M4_DEFINES_CODE@', '')
    with open(os.path.join(work, 'SQLCommon.m4'), 'w', encoding='utf-8') as f:
        f.write(common)
    if not os.path.exists(os.path.join(work, 'modules')):
        os.symlink(root, os.path.join(work, 'modules'))
    tdir = os.path.join(root, 'deep_learning/test')
    for name in sorted(os.listdir(tdir)):
        if not name.endswith('.sql_in') or name.endswith('.setup.sql_in') or (only and only not in name):
            continue
        db = 'hopper_madlib_yardstick'
        fresh_db(db)
        m4 = subprocess.run(['m4', '-P', '-DMADLIB_SCHEMA=madlib', '-D__POSTGRESQL__', '-D__PORT__=POSTGRESQL',
                             '-DMADLIB_LIBRARY_PATH=' + lib, '-I' + work,
                             os.path.join(tdir, name)], capture_output=True, text=True)
        body = re.sub(r'/\*.*?\*/|--[^\n]*', '', m4.stdout, flags=re.DOTALL).strip()
        if m4.returncode:
            verdict, why = 'failed', 'm4: ' + m4.stderr.strip()
        elif not body:
            # MADlib skips the whole file on PostgreSQL (m4_ifdef __POSTGRESQL__): it tests Greenplum only.
            verdict, why = 'empty', 'MADlib runs nothing of it on PostgreSQL (Greenplum only)'
        else:
            schema = 'madlib_installcheck_deep_learning'
            prologue = ('SET client_min_messages = warning;\n\\i %s\nCREATE SCHEMA %s;\nSET search_path = %s, madlib;\n'
                        % (os.path.join(HERE, 'harness.sql'), schema, schema))
            rc, out, err = psql(db, [], stdin=prologue + m4.stdout)
            os.makedirs(os.path.join(work, 'tests'), exist_ok=True)
            with open(os.path.join(work, 'tests', name[:-len('.sql_in')] + '.out'), 'w', encoding='utf-8') as f:
                f.write(out + err)
            verdict, why = ('failed', first_error(err)) if rc else ('passed', '')
            if rc and 'test:' + name not in diffs:
                counts['unlisted'] += 1
                why += ' (not listed in differences.txt: a regression)'
        counts[verdict] += 1
        report.append('test    %-50s %-10s %s' % (name, verdict, why))
        print(report[-1], flush=True)
    admin('DROP DATABASE IF EXISTS hopper_madlib_yardstick')
    return counts


def main():
    src = os.environ['HOPPER_MADLIB_SRC']
    work = tempfile.mkdtemp(prefix='hopper-madlib-yardstick.')
    report = []
    what = sys.argv[1] if len(sys.argv) > 1 else 'all'
    docs = run_docs(src, work, report) if what in ('all', 'docs') else None
    # `tests NAME`: only the test files whose name contains NAME (while working on one).
    tests = run_tests(src, work, report, sys.argv[2] if len(sys.argv) > 2 else None) if what in ('all', 'tests') else None
    print()
    if docs:
        print('documentation examples: %d: %d with MADlib\'s documented output, %d with a listed difference, '
              '%d with an unlisted difference, %d failed'
              % (sum(docs.values()), docs['match'], docs['difference'], docs['differs'], docs['failed']))
    if tests:
        print('test files: %d: %d passed, %d failed (%d of them not listed in differences.txt), '
              '%d with nothing to run on PostgreSQL'
              % (tests['passed'] + tests['failed'] + tests['empty'], tests['passed'], tests['failed'],
                 tests['unlisted'], tests['empty']))
    out = os.environ.get('HOPPER_MADLIB_REPORT')
    if out:
        with open(out, 'w', encoding='utf-8') as f:
            f.write('\n'.join(report) + '\n')
    print('work files (examples, test files, psql output): ' + work)
    return 1 if (docs and docs['differs']) or (tests and tests['unlisted']) else 0


if __name__ == '__main__':
    sys.exit(main())
