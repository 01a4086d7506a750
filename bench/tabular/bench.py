#!/usr/bin/env python3
"""Real tables as they are, side by side (issue 27 item 5): hopper against scikit-learn and PyTorch.

Called by bench/tabular/run.sh with a running cluster (PGHOST/PGPORT/PGUSER/PGDATABASE) whose
tables (scripts/datasets.sh load ...) hold each data set as it is plus id and is_test (the split
every tool uses). For every data set and tool it times the whole path a user takes, from the table
in PostgreSQL to predictions on the held-out rows:

  hopper        preprocess(train rows, '*') + fit + predict(test rows as they are, '*'), scored in SQL
  scikit-learn  COPY out of PostgreSQL (psql), parse, ColumnTransformer(SimpleImputer + StandardScaler,
                SimpleImputer + OneHotEncoder) + MLPClassifier/MLPRegressor, predict the test rows
  PyTorch       COPY out, parse, encode (numbers imputed and standardized, categories to codes),
                an MLP with one nn.Embedding per categorical column, predict the test rows

Same architecture (hidden layers, relu), optimizer (Adam, learning rate), minibatch and epochs
everywhere; one thread per tool (hopper: one segment, no parallel workers; BLAS and torch: 1 thread).
"""
import argparse
import csv
import datetime
import io
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from anchor import anchor_env  # noqa: E402

# Each data set: its table, target, task, the columns no tool may read, and the training settings
# all three tools share. Epochs are what the smallest data sets need to converge with Adam.
DATASETS = [
    dict(name='penguins', target='species', task='classification', hidden=[32, 32], lr=0.01, batch=32,
         epochs=60, source='vega-datasets penguins.json (npm)'),
    dict(name='credit_data', target='status', task='classification', hidden=[64, 64], lr=0.001, batch=64,
         epochs=30, source='R modeldata credit_data (Debian r-cran-modeldata)'),
    dict(name='diamonds', target='price', task='regression', hidden=[64, 64], lr=0.01, batch=128,
         epochs=20, source='R ggplot2 diamonds (Debian r-cran-ggplot2)'),
    dict(name='flights', target='delay', task='regression', hidden=[64, 64], lr=0.003, batch=128,
         epochs=15, source='vega-datasets flights-20k.json (npm)'),
]
EXCLUDED = ['id', 'is_test']
ANCHOR_ENV = anchor_env(1)


def psql(sql, *extra):
    return subprocess.run(['psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql, *extra],
                          check=True, capture_output=True, text=True).stdout


def columns_of(table, target):
    """(name, kind) of the feature columns, kind one of numeric, boolean, categorical, time."""
    rows = psql(f"SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
                f"WHERE attrelid = '{table}'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum")
    out = []
    for line in rows.splitlines():
        name, typ = line.split('|')
        if name in EXCLUDED or name == target:
            continue
        if typ in ('integer', 'bigint', 'smallint', 'double precision', 'real', 'numeric'):
            out.append((name, 'numeric'))
        elif typ == 'boolean':
            out.append((name, 'boolean'))
        elif typ.startswith('timestamp') or typ == 'date':
            out.append((name, 'time'))
        else:
            out.append((name, 'categorical'))
    return out


# ---------------------------------------------------------------- hopper

def hopper_sql(ds, seed, input_dim=None, codes=()):
    """The statements of hopper's path. The second half needs the packed width (independent_dim).
    codes: categorical columns packed as one integer code each (for embedding layers)."""
    t = ds['name']
    columns = json.dumps({c: {'encoding': 'codes'} for c in codes})
    layers = [{'units': u, 'activation': 'relu'} for u in ds['hidden']]
    if ds['task'] == 'classification':
        loss, metric = 'categorical_crossentropy', 'accuracy'
        layers.append({'units': '__CLASSES__', 'activation': 'softmax'})
    else:
        loss, metric = 'mean_squared_error', 'mse'
        layers.append({'units': 1, 'activation': 'linear'})
    return dict(
        pack=f"""SET client_min_messages = warning;
            DROP TABLE IF EXISTS {t}_train, {t}_test, {t}_packed, {t}_packed_summary, {t}_model,
                {t}_model_summary, {t}_model_info, {t}_pred;
            CREATE TABLE {t}_train AS SELECT * FROM {t} WHERE NOT is_test;
            CREATE TABLE {t}_test AS SELECT * FROM {t} WHERE is_test;
            SELECT hopper.preprocess('{t}_train', '{t}_packed', '{ds['target']}', '*',
                exclude_columns => 'id, is_test', num_segments => 1, seed => {seed}, scale => 'standardize',
                columns => '{columns}'
                {", response_type => 'regression'" if ds['task'] == 'regression' else ''});""",
        width="SELECT independent_dim, coalesce(array_length(class_values, 1), 0) FROM "
              f"{t}_packed_summary",
        layers=layers, loss=loss, metric=metric)


def run_hopper(ds, seed, embeddings=False):
    t = ds['name']
    cat = [c for c, k in columns_of(t, ds['target']) if k == 'categorical'] if embeddings else []
    q = hopper_sql(ds, seed, codes=cat)
    start = time.perf_counter()
    psql(q['pack'])
    dim, classes = (int(x) for x in psql(q['width']).strip().split('|'))
    layers = [dict(l, units=classes) if l['units'] == '__CLASSES__' else l for l in q['layers']]
    if embeddings:
        # One embedding per categorical column (its vocabulary and input_dim left to hopper), as wide
        # as PyTorch's: min(10, (categories + 1) / 2).
        kept = psql(f"SELECT c ->> 'name', jsonb_array_length(c -> 'categories') FROM {t}_packed_summary, "
                    "jsonb_array_elements(feature_recipe -> 'columns') c WHERE c ->> 'kind' = 'categorical'")
        emb = [{'type': 'embedding', 'column': name, 'output_dim': min(10, (int(n) + 2) // 2)}
               for name, n in (line.split('|') for line in kept.strip().splitlines())]
        arch = json.dumps({'layers': emb + layers})
    else:
        arch = json.dumps({'input_dim': dim, 'layers': layers})
    compile_params = f"loss='{q['loss']}', optimizer='Adam(lr={ds['lr']})', metrics=['{q['metric']}']"
    if ds['task'] == 'classification':
        score = (f"SELECT avg((p.estimated_{ds['target']} = t.{ds['target']})::int) "
                 f"FROM {t}_pred p JOIN {t} t USING (id)")
    else:
        score = (f"SELECT sqrt(avg((p.estimated_{ds['target']} - t.{ds['target']})^2)) "
                 f"FROM {t}_pred p JOIN {t} t USING (id)")
    out = psql(f"""SET client_min_messages = warning;
        SET max_parallel_workers_per_gather = 0;
        CALL hopper.fit('{t}_packed', '{t}_model', '{arch}', $${compile_params}$$,
                        'batch_size={ds['batch']}, seed={seed}', {ds['epochs']});
        SELECT hopper.predict('{t}_model', '{t}_test', 'id', '*', '{t}_pred');
        {score};""")
    wall = time.perf_counter() - start
    metric = float(out.strip().splitlines()[-1])
    training = float(psql(f"SELECT training_seconds + hop_seconds FROM {t}_model_summary"))
    return dict(metric=metric, seconds=wall, note=f'packed width {dim}; training statements {training:.2f} s')


# ---------------------------------------------------------------- the others' common path

def copy_out(ds, cols, test):
    """COPY the rows out of PostgreSQL as CSV (psql), parsed into lists of column values."""
    names = ', '.join('"%s"' % c for c, _ in cols) + f', "{ds["target"]}"'
    text = psql(f"COPY (SELECT {names} FROM {ds['name']} WHERE {'' if test else 'NOT '}is_test ORDER BY id) "
                "TO STDOUT (FORMAT csv)")
    rows = list(csv.reader(io.StringIO(text)))
    return rows


def as_columns(rows, cols, ds):
    """Columns of python values: numbers as float (None for NULL), categories as str (None for NULL)."""
    import numpy as np
    out = {}
    for j, (name, kind) in enumerate(cols):
        raw = [r[j] for r in rows]
        if kind == 'numeric':
            out[name] = np.array([float(v) if v != '' else np.nan for v in raw])
        elif kind == 'boolean':
            out[name] = np.array([{'t': 1.0, 'f': 0.0}.get(v, np.nan) for v in raw])
        elif kind == 'time':
            epoch = datetime.datetime(1970, 1, 1)
            out[name] = np.array([(datetime.datetime.fromisoformat(v) - epoch).total_seconds() / 86400.0
                                  if v != '' else np.nan for v in raw])
        else:
            # COPY's CSV writes NULL as an empty unquoted field and '' as "": csv.reader sees both as
            # '', which no category of these data sets is.
            out[name] = np.array([v if v != '' else None for v in raw], dtype=object)
    y = [r[len(cols)] for r in rows]
    if ds['task'] == 'regression':
        y = np.array([float(v) for v in y], dtype=np.float32)
    return out, y


def fetch(ds):
    """The others' common start: the columns, COPY out (timed), parsed; numeric and categorical names."""
    cols = columns_of(ds['name'], ds['target'])
    copy_start = time.perf_counter()
    train, test = copy_out(ds, cols, False), copy_out(ds, cols, True)
    copy_s = time.perf_counter() - copy_start
    num = [c for c, k in cols if k != 'categorical']
    cat = [c for c, k in cols if k == 'categorical']
    return cols, copy_s, train, test, as_columns(train, cols, ds), as_columns(test, cols, ds), num, cat


# ---------------------------------------------------------------- scikit-learn

def run_sklearn(ds, seed):
    start = time.perf_counter()
    import numpy as np
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    cols, copy_s, train, test, (xtr, ytr), (xte, yte), num, cat = fetch(ds)

    def matrix(x):
        m = np.empty((len(next(iter(x.values()))), len(cols)), dtype=object)
        for j, (c, _) in enumerate(cols):
            m[:, j] = x[c]
        return m
    idx = {c: j for j, (c, _) in enumerate(cols)}
    encode = ColumnTransformer([
        ('num', make_pipeline(SimpleImputer(strategy='median', add_indicator=True), StandardScaler()),
         [idx[c] for c in num]),
        ('cat', make_pipeline(SimpleImputer(strategy='constant', fill_value='(null)'),
                              OneHotEncoder(handle_unknown='ignore')), [idx[c] for c in cat])])
    common = dict(hidden_layer_sizes=tuple(ds['hidden']), solver='adam', learning_rate_init=ds['lr'],
                  batch_size=ds['batch'], max_iter=ds['epochs'], alpha=0.0, tol=0.0,
                  n_iter_no_change=ds['epochs'] + 1, shuffle=True, random_state=seed)
    model = (MLPClassifier if ds['task'] == 'classification' else MLPRegressor)(**common)
    import warnings
    from sklearn.exceptions import ConvergenceWarning
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ConvergenceWarning)
        xt = encode.fit_transform(matrix(xtr)).astype(np.float32)
        model.fit(xt, ytr)
    pred = model.predict(encode.transform(matrix(xte)).astype(np.float32))
    metric = score(ds, pred, yte)
    return dict(metric=metric, seconds=time.perf_counter() - start, copy_seconds=copy_s,
                note=f'encoded width {xt.shape[1]}')


def score(ds, pred, y):
    import numpy as np
    if ds['task'] == 'classification':
        return float(np.mean(np.asarray(pred) == np.asarray(y)))
    return float(np.sqrt(np.mean((np.asarray(pred, dtype=np.float64).ravel() - np.asarray(y, dtype=np.float64)) ** 2)))


# ---------------------------------------------------------------- PyTorch

def run_torch(ds, seed, embeddings=True):
    start = time.perf_counter()
    import numpy as np
    import torch
    from torch import nn
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    cols, copy_s, train, test, (xtr, ytr), (xte, yte), num, cat = fetch(ds)
    # Numbers: median imputation, a missing indicator where training had NULLs, standardized.
    parts_tr, parts_te = [], []
    for c in num:
        a, b = xtr[c], xte[c]
        med = np.nanmedian(a)
        if np.isnan(a).any():
            parts_tr.append(np.isnan(a).astype(np.float32))
            parts_te.append(np.isnan(b).astype(np.float32))
        a, b = np.where(np.isnan(a), med, a), np.where(np.isnan(b), med, b)
        mu, sd = a.mean(), a.std() or 1.0
        parts_tr.append(((a - mu) / sd).astype(np.float32))
        parts_te.append(((b - mu) / sd).astype(np.float32))
    # Categories: codes 1..n from training (NULL a category of its own), 0 for a value never seen;
    # into embeddings, or (embeddings=False) one-hot beside the numbers, an unseen value all zeros.
    codes_tr, codes_te, sizes = [], [], []
    for c in cat:
        vocab = {v: i + 1 for i, v in enumerate(sorted(set(xtr[c]), key=lambda v: (v is None, v)))}
        ctr_c = np.array([vocab.get(v, 0) for v in xtr[c]], dtype=np.int64)
        cte_c = np.array([vocab.get(v, 0) for v in xte[c]], dtype=np.int64)
        if embeddings:
            codes_tr.append(ctr_c)
            codes_te.append(cte_c)
            sizes.append(len(vocab) + 1)
        else:
            eye = np.vstack([np.zeros((1, len(vocab))), np.eye(len(vocab))]).astype(np.float32)
            parts_tr.extend(eye[ctr_c].T)
            parts_te.extend(eye[cte_c].T)
    ntr = torch.from_numpy(np.stack(parts_tr, 1)) if parts_tr else torch.zeros(len(train), 0)
    nte = torch.from_numpy(np.stack(parts_te, 1)) if parts_te else torch.zeros(len(test), 0)
    ctr = torch.from_numpy(np.stack(codes_tr, 1)) if codes_tr else torch.zeros(len(train), 0, dtype=torch.long)
    cte = torch.from_numpy(np.stack(codes_te, 1)) if codes_te else torch.zeros(len(test), 0, dtype=torch.long)
    if ds['task'] == 'classification':
        classes = sorted(set(ytr))
        ci = {v: i for i, v in enumerate(classes)}
        ttr = torch.tensor([ci[v] for v in ytr])
        out_dim, loss_fn = len(classes), nn.CrossEntropyLoss()
    else:
        ttr = torch.from_numpy(ytr).unsqueeze(1)
        out_dim, loss_fn = 1, nn.MSELoss()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.ModuleList(nn.Embedding(n, min(10, (n + 1) // 2)) for n in sizes)
            width = ntr.shape[1] + sum(e.embedding_dim for e in self.emb)
            layers = []
            for h in ds['hidden']:
                layers += [nn.Linear(width, h), nn.ReLU()]
                width = h
            layers.append(nn.Linear(width, out_dim))
            self.mlp = nn.Sequential(*layers)

        def forward(self, xn, xc):
            return self.mlp(torch.cat([xn] + [e(xc[:, i]) for i, e in enumerate(self.emb)], 1))

    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=ds['lr'])
    n = len(train)
    for _ in range(ds['epochs']):
        perm = torch.randperm(n)
        for i in range(0, n, ds['batch']):
            b = perm[i:i + ds['batch']]
            opt.zero_grad()
            loss = loss_fn(net(ntr[b], ctr[b]), ttr[b])
            loss.backward()
            opt.step()
    with torch.no_grad():
        out = net(nte, cte)
    if ds['task'] == 'classification':
        pred = [classes[i] for i in out.argmax(1).tolist()]
    else:
        pred = out.numpy()
    metric = score(ds, pred, yte)
    return dict(metric=metric, seconds=time.perf_counter() - start, copy_seconds=copy_s,
                note=f'{ntr.shape[1]} numbers + {len(sizes)} embeddings' if embeddings else f'encoded width {ntr.shape[1]}')


RUNNERS = {'hopper': run_hopper,
           # hopper with an embedding per categorical column (packed as codes, input_dim left out), as
           # the PyTorch model has.
           'hopper, embeddings': lambda ds, seed: run_hopper(ds, seed, embeddings=True),
           'scikit-learn': run_sklearn, 'PyTorch': run_torch,
           # The same PyTorch MLP with the categories one-hot, as hopper and scikit-learn encode them:
           # what the embeddings alone change.
           'PyTorch, one-hot': lambda ds, seed: run_torch(ds, seed, embeddings=False)}


def child(args):
    """One tool on one data set in a fresh process (the others' imports are part of their path)."""
    ds = next(d for d in DATASETS if d['name'] == args.dataset)
    ds = dict(ds, epochs=args.epochs or ds['epochs'])
    print(json.dumps(RUNNERS[args.tool](ds, args.seed)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--child', action='store_true')
    ap.add_argument('--dataset')
    ap.add_argument('--tool')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--seeds', type=int, default=3)
    ap.add_argument('--epochs', type=int, default=0)
    ap.add_argument('--only', default='')
    ap.add_argument('--out')
    ap.add_argument('--commit', default='unknown')
    args = ap.parse_args()
    if args.child:
        return child(args)
    only = [s for s in args.only.split(',') if s]
    sets = [d for d in DATASETS if not only or d['name'] in only]
    results = {}
    load = [os.getloadavg()[0]]
    for ds in sets:
        for seed in range(1, args.seeds + 1):
            # Tools interleaved per seed, so a change in the machine's load hits them alike.
            for tool in RUNNERS:
                cmd = [sys.executable, __file__, '--child', '--dataset', ds['name'], '--tool', tool,
                       '--seed', str(seed), '--epochs', str(args.epochs)]
                env = os.environ if tool.startswith('hopper') else ANCHOR_ENV
                wall0 = time.perf_counter()
                r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout)
                r['process_seconds'] = time.perf_counter() - wall0
                results.setdefault((ds['name'], tool), []).append(r)
                print(f"{ds['name']:12} {tool:13} seed {seed}: metric {r['metric']:.4f}  "
                      f"{r['process_seconds']:.2f} s  {r.get('note', '')}", file=sys.stderr, flush=True)
    load.append(os.getloadavg()[0])
    report(args, sets, results, load)


def report(args, sets, results, load):
    import threadpoolctl
    blas = subprocess.run([sys.executable, '-c', 'import json, numpy, torch, threadpoolctl; '
                           'print(json.dumps(threadpoolctl.threadpool_info()))'],
                          env=ANCHOR_ENV, capture_output=True, text=True, check=True).stdout
    blas = [f"{b['internal_api']} {b.get('version')} ({b.get('architecture')}, {b['num_threads']} threads)"
            for b in json.loads(blas) if b['user_api'] == 'blas']
    cpu = open('/proc/cpuinfo').read()
    model = next(l.split(':', 1)[1].strip() for l in cpu.splitlines() if l.startswith('model name'))
    family = next(l.split(':', 1)[1].strip() for l in cpu.splitlines() if l.startswith('cpu family'))
    import sklearn
    import torch
    lines = [f"# Tables as they are, side by side ({datetime.date.today()}, {platform.node()})", '',
             f"- machine: {model}, cpu family {family}, {os.cpu_count()} cores; load average "
             f"{load[0]:.2f} at start, {load[1]:.2f} at end (other work shared the machine when above ~1)",
             f"- hopper commit {args.commit}, PostgreSQL "
             f"{psql('SHOW server_version').strip()}; scikit-learn {sklearn.__version__}, PyTorch "
             f"{torch.__version__}, BLAS: {'; '.join(blas) or 'none found'} (set to 1 thread for the runs)",
             f"- one thread per tool: hopper one segment, no parallel workers; OMP/OPENBLAS/MKL_NUM_THREADS=1, "
             f"torch.set_num_threads(1); {args.seeds} seeds per tool, run interleaved",
             "- whole path: from the table in PostgreSQL to scored predictions on the test rows, in a fresh "
             "process (hopper: preprocess '*' + fit + predict on raw rows, scored in SQL, through psql; "
             "the others: Python start and imports, COPY out through psql, parse, encode, train, predict)",
             "- 'PyTorch, one-hot' is the PyTorch row with the categories one-hot (as hopper and scikit-learn "
             "encode them) instead of embeddings; 'hopper, embeddings' packs each categorical column as one code "
             "and reads it with an embedding layer as wide as PyTorch's (input_dim and vocabularies left out)",
             '', '| data set | rows (train/test) | tool | metric | mean (min-max) over seeds | whole path s, median | COPY out s | ratio to hopper | notes |',
             '| --- | --- | --- | --- | --- | --- | --- | --- | --- |']
    for ds in sets:
        n = psql(f"SELECT count(*) FILTER (WHERE NOT is_test) || '/' || count(*) FILTER (WHERE is_test) FROM {ds['name']}").strip()
        base = statistics.median(r['process_seconds'] for r in results[(ds['name'], 'hopper')])
        for tool in RUNNERS:
            rs = results[(ds['name'], tool)]
            ms = [r['metric'] for r in rs]
            med = statistics.median(r['process_seconds'] for r in rs)
            copy_s = statistics.median(r['copy_seconds'] for r in rs) if 'copy_seconds' in rs[0] else None
            metric = 'accuracy' if ds['task'] == 'classification' else 'RMSE'
            lines.append(f"| {ds['name']} | {n} | {tool} | {metric} | {statistics.mean(ms):.4f} ({min(ms):.4f}-{max(ms):.4f}) "
                         f"| {med:.2f} | {'' if copy_s is None else f'{copy_s:.3f}'} | {med / base:.2f} | {rs[0].get('note', '')} |")
    lines += ['', 'Settings per data set (the same for every tool):', '']
    for ds in sets:
        lines.append(f"- {ds['name']} ({ds['source']}): target {ds['target']} ({ds['task']}), hidden layers "
                     f"{ds['hidden']} relu, Adam lr {ds['lr']}, minibatch {ds['batch']}, {ds['epochs']} epochs")
    text = '\n'.join(lines) + '\n'
    print(text)
    if args.out:
        with open(args.out, 'w') as f:
            f.write(text)


if __name__ == '__main__':
    main()
