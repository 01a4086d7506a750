-- hopper_madlib 0.2.0: Apache MADlib's deep-learning functions (1.21 / 2.x signatures) in schema
-- madlib, each a thin mapping onto hopper's API (no second implementation), and the few utilities
-- MADlib's deep-learning scripts call (train_test_split, hyperband_schedule, gpu_configuration):
-- scripts written for MADlib run on plain PostgreSQL. docs/madlib.md maps every argument and says
-- how many of MADlib's own examples and tests run (test/scripts/madlib_yardstick.sh). Arguments
-- hopper cannot honour (GPUs, custom Python objects, Hyperopt) are refused with 0A000.
--
-- Table names are the caller's, found through the caller's search_path as MADlib finds them; nothing
-- else is. A user-facing function is a SQL-standard body (parsed, so bound to its operators and
-- functions, when the extension is created) that resolves the table names it is given to quoted
-- schema-qualified ones (__hopper_input_name, __hopper_output_name) and hands them to its
-- implementation, madlib.__hopper_<function>, which runs with search_path = pg_catalog, pg_temp:
-- no operator or function a role plants in a schema on the caller's search_path can run in it.
-- test/regress/sql/search_path.sql keeps every body of both extensions that way.
\echo Use "CREATE EXTENSION hopper_madlib" to load this file. \quit

-- ---- names and shared checks -------------------------------------------------------------------
-- An existing table as the caller names it (through the caller's search_path): "schema"."table".
-- A name that finds no table is returned as given, for hopper's own error naming it; NULL and ''
-- are returned as they are, for the implementation's argument checks.
-- Refuses (42804) a column of `tbl` among `cols` whose type PostgreSQL does not build in (nor a domain
-- over one): the casts and operators this extension's SQL applies to the columns it reads would run
-- functions of a role who created the type -- CREATE CAST needs only the type -- as the caller, a
-- superuser included (hostile review: an enum with a cast to text).
-- A domain is refused too: a value assigned to it runs its CHECK. The table is locked first (ACCESS
-- SHARE, to the end of the transaction), so that no ALTER TABLE retypes a column between this check
-- and the statements reading it. cols NULL: every column (hopper's kinds of tables).
CREATE FUNCTION madlib.__hopper_require_builtin_columns(tbl regclass, cols text[], what text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    bad_column name;
    bad_type text;
BEGIN
    EXECUTE format('SELECT FROM %s LIMIT 0', tbl);
    SELECT a.attname, format_type(a.atttypid, a.atttypmod) INTO bad_column, bad_type
    FROM pg_attribute a
    WHERE a.attrelid = tbl AND (cols IS NULL OR a.attname = ANY (cols)) AND a.attnum > 0 AND NOT a.attisdropped
      AND a.atttypid >= 16384
    ORDER BY a.attnum LIMIT 1;
    IF bad_column IS NOT NULL THEN
        RAISE EXCEPTION '% column "%" of % has type %', what, bad_column, tbl, bad_type
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = 'hopper_madlib reads columns of PostgreSQL''s built-in types: a type or domain some role '
                           'created can carry casts and checks that would run as the caller.',
                  HINT = 'Cast the column to a built-in type (text, a number, a numeric array) in a view.';
    END IF;
END $$;

-- Drops this session's temporary table `name` if it is there: DROP TABLE IF EXISTS pg_temp.<name>
-- raised a NOTICE (schema "pg_temp" does not exist) in a session without temporary tables yet.
CREATE FUNCTION madlib.__hopper_drop_temp_table(name text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF to_regclass('pg_temp.' || quote_ident(name)) IS NOT NULL THEN
        EXECUTE format('DROP TABLE pg_temp.%I', name);
    END IF;
END $$;

CREATE FUNCTION madlib.__hopper_input_name(name text) RETURNS text
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT CASE WHEN name IS NULL OR pg_catalog.btrim(name) OPERATOR(pg_catalog.=) '' THEN name
                ELSE COALESCE((SELECT pg_catalog.format('%I.%I', n.nspname, c.relname)
                               FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
                               WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(name)), name) END;
END;

-- A table to be created as the caller names it: an unqualified name goes into the schema CREATE
-- TABLE would use (the first existing schema of the caller's search_path), as hopper's outputs do.
-- Anything but one plain or quoted identifier is returned as given (a qualified name, or one with
-- bad syntax, which the implementation refuses with 42602).
CREATE FUNCTION madlib.__hopper_output_name(name text) RETURNS text
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT CASE WHEN name IS NULL OR pg_catalog.btrim(name) OPERATOR(pg_catalog.=) '' THEN name
                WHEN name OPERATOR(pg_catalog.~) '^([[:alpha:]_][[:alnum:]_$]*|"([^"]|"")+")$'
                     AND pg_catalog.current_schema() IS NOT NULL
                    THEN pg_catalog.format('%I.%I', pg_catalog.current_schema(), (pg_catalog.parse_ident(name))[1])
                ELSE name END;
END;

-- The one place names become SQL: each part of a (possibly qualified, possibly quoted) table name
-- quoted, suffix added to the table's own part ('"Mad Model"', '_summary' -> "Mad Model_summary").
CREATE FUNCTION madlib.__hopper_quote_name(name text, suffix text DEFAULT '') RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    parts text[];
BEGIN
    IF name IS NULL THEN
        RETURN NULL;
    END IF;
    BEGIN
        parts := parse_ident(name);
    EXCEPTION WHEN invalid_parameter_value THEN
        RAISE EXCEPTION 'invalid table name "%"', name USING ERRCODE = 'invalid_name',
            HINT = 'Quote a name with spaces or capitals: ''"My Model"''.';
    END;
    parts[cardinality(parts)] := parts[cardinality(parts)] || suffix;
    RETURN (SELECT string_agg(quote_ident(p.part), '.' ORDER BY p.i) FROM unnest(parts) WITH ORDINALITY AS p(part, i));
END $$;

-- Required arguments (MADlib's own tests look for the words "NULL/empty input table name").
CREATE FUNCTION madlib.__hopper_required(given boolean, argument text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF given IS NOT TRUE THEN
        RAISE EXCEPTION 'argument % must not be NULL', argument USING ERRCODE = 'null_value_not_allowed';
    END IF;
END $$;

CREATE FUNCTION madlib.__hopper_required_table(name text, argument text, kind text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF name IS NULL THEN
        RAISE EXCEPTION 'NULL/empty % table name: argument % is NULL', kind, argument USING ERRCODE = 'null_value_not_allowed';
    ELSIF btrim(name) = '' THEN
        RAISE EXCEPTION 'NULL/empty % table name: argument % is empty', kind, argument USING ERRCODE = 'invalid_name';
    ELSIF kind = 'input' THEN
        PERFORM madlib.__hopper_input_exists(name, argument);
    END IF;
END $$;

-- An input table that is not there, in MADlib's words (its tests look for "'<name>' does not exist").
-- The name has been resolved through the caller's search_path already; one of bad syntax is left to
-- hopper's 42602.
CREATE FUNCTION madlib.__hopper_input_exists(name text, argument text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    found regclass;
BEGIN
    IF name IS NULL OR btrim(name) = '' THEN
        RETURN;
    END IF;
    BEGIN
        found := to_regclass(name);
    EXCEPTION WHEN invalid_name OR syntax_error OR invalid_parameter_value THEN
        RETURN;
    END;
    IF found IS NULL THEN
        RAISE EXCEPTION 'input table ''%'' does not exist', name USING ERRCODE = 'undefined_table',
            DETAIL = format('It is argument %s.', argument);
    END IF;
END $$;

-- Whether hopper made table t as a table of kind (hopper.output_tables: its mark "[hopper:<token>]" is
-- in the table's comment).
CREATE FUNCTION madlib.__hopper_made(t regclass, kind text) RETURNS boolean
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT EXISTS (SELECT 1 FROM hopper.output_tables o
                   WHERE o.kind OPERATOR(pg_catalog.=) __hopper_made.kind
                     AND pg_catalog.strpos(pg_catalog.obj_description(t, 'pg_class'),
                                           '[hopper:' OPERATOR(pg_catalog.||) o.token::text OPERATOR(pg_catalog.||) ']')
                         OPERATOR(pg_catalog.>) 0);
END;

-- MADlib drops a table of architectures or custom functions with its last row; hopper_madlib drops
-- it only when hopper made it (its mark, of this kind), never a table of the user's. `notice` has a
-- %s for the table.
CREATE FUNCTION madlib.__hopper_drop_if_emptied(t regclass, kind text, notice text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    left_over boolean;
BEGIN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s)', t) INTO left_over;
    IF NOT left_over AND madlib.__hopper_made(t, kind) THEN
        RAISE NOTICE '%', format(notice, t);
        EXECUTE format('DROP TABLE %s', t);
    END IF;
END $$;

CREATE FUNCTION madlib.__hopper_unsupported(what text, detail text, hint text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RAISE EXCEPTION '% is not supported by hopper', what USING ERRCODE = 'feature_not_supported', DETAIL = detail, HINT = hint;
END $$;

CREATE FUNCTION madlib.__hopper_no_gpus(use_gpus boolean) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF use_gpus THEN
        PERFORM madlib.__hopper_unsupported('use_gpus => TRUE', 'hopper trains on CPUs (oneDNN and Eigen products), in the database''s own processes.',
                                            'Leave out use_gpus, or pass FALSE.');
    END IF;
END $$;

-- MADlib's view of hopper's class_values: the classes num_classes padded (hopper.preprocess names
-- them <padding 1>, <padding 2>, ..., after the data's) are NULL, as MADlib's summaries and
-- predictions show them; so is the class of NULL labels, first (hopper_madlib names it <NULL>:
-- __hopper_null_class_source).
CREATE FUNCTION madlib.__hopper_madlib_classes(class_values text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT
BEGIN ATOMIC
    -- p.n: the data's classes, those before <padding 1>; padded only when <padding 1> ... <padding k> end the list.
    SELECT CASE WHEN class_values[1] OPERATOR(pg_catalog.=) '<NULL>' THEN ARRAY[NULL::text] ELSE '{}'::text[] END
           OPERATOR(pg_catalog.||) (CASE WHEN class_values[p.n OPERATOR(pg_catalog.+) 1:] OPERATOR(pg_catalog.=)
                     ARRAY(SELECT pg_catalog.format('<padding %s>', i)
                           FROM pg_catalog.generate_series(1, pg_catalog.cardinality(class_values) OPERATOR(pg_catalog.-) p.n) i)
                THEN class_values[1:p.n] OPERATOR(pg_catalog.||)
                     pg_catalog.array_fill(NULL::text, ARRAY[pg_catalog.cardinality(class_values) OPERATOR(pg_catalog.-) p.n])
                ELSE class_values END)[p.first:]
    FROM (SELECT pg_catalog.array_position(class_values, '<padding 1>') OPERATOR(pg_catalog.-) 1 AS n,
                 CASE WHEN class_values[1] OPERATOR(pg_catalog.=) '<NULL>' THEN 2 ELSE 1 END AS first) p;
END;

-- SQL reading a summary's name or type column as hopper reads it (hopper's summary_text_column):
-- hopper_<col> where hopper_madlib keeps it (__hopper_madlib_summary_types), else MADlib 2.x's
-- text[] joined, else hopper's text.
CREATE FUNCTION madlib.__hopper_summary_text(summary regclass, col text) RETURNS text
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT CASE WHEN a.attname OPERATOR(pg_catalog.<>) col THEN pg_catalog.quote_ident(a.attname)
                WHEN a.atttypid OPERATOR(pg_catalog.=) 'text[]'::pg_catalog.regtype
                THEN pg_catalog.format('pg_catalog.array_to_string(%I, '', '')', col)
                ELSE pg_catalog.quote_ident(col) END
    FROM pg_catalog.pg_attribute a
    WHERE a.attrelid OPERATOR(pg_catalog.=) summary AND NOT a.attisdropped
      AND (a.attname OPERATOR(pg_catalog.=) col
           OR (a.attname OPERATOR(pg_catalog.=) ('hopper_' OPERATOR(pg_catalog.||) col)
               AND a.atttypid OPERATOR(pg_catalog.=) 'text'::pg_catalog.regtype))
    ORDER BY a.attname OPERATOR(pg_catalog.<>) col DESC LIMIT 1;
END;

-- MADlib's <dependent>_class_values column of a summary (class_text_class_values), beside hopper's
-- class_values.
CREATE FUNCTION madlib.__hopper_class_values_column(summary regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    y text;
    vartype regtype;
BEGIN
    EXECUTE format('SELECT %s FROM %s', madlib.__hopper_summary_text(summary, 'dependent_varname'), summary) INTO y;
    IF y ~ '^([[:alpha:]_][[:alnum:]_$]*|"([^"]|"")+")$' THEN
        y := (parse_ident(y))[1] || '_class_values';
        EXECUTE format('SELECT to_regtype(%s) FROM %s', madlib.__hopper_summary_text(summary, 'dependent_vartype'), summary)
            INTO vartype;
        -- Of the dependent variable's type, as MADlib's ({4.0,4.2,5.0} for double precision); text
        -- where hopper's class names do not read as that type.
        BEGIN
            -- A type some role created (named by a summary's text) would run its casts or a domain's
            -- CHECK as the caller: text.
            EXECUTE format('ALTER TABLE %s ADD COLUMN IF NOT EXISTS %I %s', summary, y,
                           CASE WHEN vartype IS NULL OR vartype = 'unknown'::regtype OR vartype::oid >= 16384 THEN 'text[]'
                                ELSE format_type(vartype, NULL) || '[]' END);
            EXECUTE format('UPDATE %1$s SET %2$I = madlib.__hopper_madlib_classes(class_values)::%3$s', summary, y,
                           format_type((SELECT atttypid FROM pg_attribute WHERE attrelid = summary AND attname = y), NULL));
        EXCEPTION WHEN invalid_text_representation OR cannot_coerce OR datatype_mismatch
                       OR numeric_value_out_of_range OR invalid_datetime_format THEN
            EXECUTE format('ALTER TABLE %s DROP COLUMN IF EXISTS %I', summary, y);
            EXECUTE format('ALTER TABLE %s ADD COLUMN %I text[]', summary, y);
            EXECUTE format('UPDATE %s SET %I = madlib.__hopper_madlib_classes(class_values)', summary, y);
        END;
    END IF;
END $$;

-- MADlib passes compile_params to Keras as Python, where an optimizer object may go unquoted
-- (optimizer=SGD(lr=0.01, nesterov=True)): quoted here, as hopper's parser takes it.
CREATE FUNCTION madlib.__hopper_compile_params(compile_params text) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RETURN regexp_replace(compile_params, '(\moptimizer\s*=\s*)([[:alpha:]_][[:alnum:]_.]*(\s*\([^()]*\))?)', '\1''\2''', 'g');
END $$;

-- The loss and metrics as compile_params names them (metrics=['mae'], loss='categorical_crossentropy'):
-- MADlib's summaries and evaluations report them so (metrics_type {mae}), hopper's its canonical names.
CREATE FUNCTION madlib.__hopper_compile_names(compile_params text, OUT metrics text[], OUT loss text)
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    metrics := ARRAY(SELECT btrim(m, ' ''"') FROM unnest(string_to_array(
                         substring(compile_params FROM '\mmetrics\s*=\s*\[([^]]*)\]'), ',')) m
                     WHERE btrim(m, ' ''"') <> '');
    IF cardinality(metrics) = 0 THEN
        metrics := NULL;
    END IF;
    loss := substring(compile_params FROM '\mloss\s*=\s*[''"]?([[:alnum:]_.]+)');
END $$;

-- Keras fit options MADlib passes on and hopper has no counterpart for, refused by name (0A000):
-- callbacks are Python objects (their unquoted syntax would otherwise read as an error of syntax).
-- (initial_epoch is hopper's: epochs - initial_epoch epochs, as Keras trains.)
CREATE FUNCTION madlib.__hopper_fit_params(fit_params text) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF fit_params ~ '\mcallbacks\s*=' THEN
        PERFORM madlib.__hopper_unsupported('fit_params callbacks (Keras callback objects)',
                                            'hopper runs no Python; it reports progress through PostgreSQL (hopper.run_progress).',
                                            'Leave out callbacks.');
    END IF;
    RETURN fit_params;
END $$;

-- madlib_keras_fit's fit_params callbacks=[TensorBoard(log_dir='/tmp/logs')]: Keras' TensorBoard
-- callback is the one callback hopper has a counterpart for -- the run's loss and metrics per
-- iteration written as TensorBoard event files (hopper.tensorboard_scalars) under log_dir/train and
-- log_dir/validation, as Keras writes them. Returns log_dir (NULL without callbacks); another
-- callback, or an argument of TensorBoard other than log_dir, is refused (0A000).
CREATE FUNCTION madlib.__hopper_tensorboard_log_dir(fit_params text) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    list text := (regexp_match(fit_params, '\mcallbacks\s*=\s*\[(.*)\]'))[1];
    args text;
    a text[];
    log_dir text := 'logs';   -- Keras' default (relative: refused below)
BEGIN
    IF list IS NULL THEN
        RETURN NULL;
    END IF;
    args := (regexp_match(btrim(list), '^(?:(?:tf\.)?keras\.callbacks\.)?TensorBoard\s*\((.*)\)$'))[1];
    IF args IS NULL THEN
        PERFORM madlib.__hopper_unsupported(format('fit_params callbacks %s', btrim(list)),
            'Of Keras'' callbacks hopper has TensorBoard (log_dir): it reports progress through PostgreSQL (hopper.run_progress).',
            'Leave out callbacks, or pass callbacks=[TensorBoard(log_dir=''/an/absolute/path'')].');
    END IF;
    FOR a IN SELECT regexp_match(btrim(arg), '^([[:alnum:]_]+)\s*=\s*(''[^'']*''|"[^"]*")$')
             FROM regexp_split_to_table(args, ',') arg WHERE btrim(arg) <> '' LOOP
        IF a IS NULL OR a[1] <> 'log_dir' THEN
            PERFORM madlib.__hopper_unsupported(format('TensorBoard arguments other than log_dir (%s)', btrim(args)),
                'hopper writes the loss and metrics of each evaluated iteration, as scalars.',
                'Pass TensorBoard(log_dir=''/an/absolute/path'').');
        END IF;
        log_dir := substr(a[2], 2, length(a[2]) - 2);
    END LOOP;
    -- Checked before training, not after it (hopper.tensorboard_scalars writes on the server).
    IF log_dir !~ '^/' THEN
        RAISE EXCEPTION 'TensorBoard log_dir must be an absolute path' USING ERRCODE = 'invalid_parameter_value',
            DETAIL = format('It is %L; hopper writes the event files on the database server.', log_dir),
            HINT = 'Pass TensorBoard(log_dir=''/an/absolute/path'').';
    END IF;
    RETURN log_dir;
END $$;

-- fit_params without its callbacks (hopper's fit parameters).
CREATE FUNCTION madlib.__hopper_without_callbacks(fit_params text) RETURNS text
LANGUAGE sql IMMUTABLE
BEGIN ATOMIC
    SELECT pg_catalog.regexp_replace(pg_catalog.regexp_replace(fit_params, '\s*,\s*callbacks\s*=\s*\[.*\]', ''),
                                     'callbacks\s*=\s*\[.*\]\s*,?', '');
END;

-- The curves of a fit (its _info row) as TensorBoard event files, as Keras' TensorBoard callback
-- writes them: log_dir/train and log_dir/validation, tags epoch_loss and epoch_<metric> (the metric as
-- compile_params names it), one step per evaluated iteration at the time it was evaluated.
CREATE FUNCTION madlib.__hopper_tensorboard(log_dir text, info regclass, summary regclass, metric text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    i record;
    started float8;
    split text;
BEGIN
    EXECUTE format('SELECT metrics_iters, metrics_elapsed_time, training_loss, training_metrics, validation_loss,
                           validation_metrics FROM %s', info) INTO i;
    EXECUTE format('SELECT extract(epoch FROM start_training_time) FROM %s', summary) INTO started;
    FOREACH split IN ARRAY ARRAY['train', 'validation'] LOOP
        CONTINUE WHEN split = 'validation' AND i.validation_loss IS NULL;
        PERFORM hopper.tensorboard_scalars(rtrim(log_dir, '/') || '/' || split, array_agg(e.tag ORDER BY e.ord, e.k),
                                           array_agg(e.step ORDER BY e.ord, e.k), array_agg(e.v ORDER BY e.ord, e.k),
                                           array_agg(started + e.t ORDER BY e.ord, e.k))
        FROM (SELECT k, 'epoch_loss' AS tag, it::int8 AS step, l AS v, t, ord
              FROM unnest(i.metrics_iters, i.metrics_elapsed_time,
                          CASE WHEN split = 'train' THEN i.training_loss ELSE i.validation_loss END) WITH ORDINALITY
                   AS u(it, t, l, ord), (VALUES (1)) one(k)
              UNION ALL
              SELECT 2, 'epoch_' || metric, it::int8, m, t, ord
              FROM unnest(i.metrics_iters, i.metrics_elapsed_time,
                          CASE WHEN split = 'train' THEN i.training_metrics ELSE i.validation_metrics END) WITH ORDINALITY
                   AS u(it, t, m, ord)
              WHERE metric IS NOT NULL) e
        WHERE e.v IS NOT NULL;
    END LOOP;
END $$;

-- MADlib's output shape: the model column is model_weights (hopper's functions read either name).
CREATE FUNCTION madlib.__hopper_madlib_shape(model_table text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = madlib.__hopper_quote_name(model_table)::regclass
               AND a.attname = 'model_state' AND NOT a.attisdropped) THEN
        EXECUTE format('ALTER TABLE %s RENAME COLUMN model_state TO model_weights', madlib.__hopper_quote_name(model_table)::regclass);
    END IF;
END $$;

-- MADlib's search spaces are Python dict literals: {'lr': [0.0001, 0.1, 'log'], 'optimizer': ['Adam']}.
-- As JSON, with MADlib's [low, high, 'linear' | 'log'] ranges as hopper's uniform / log_uniform.
CREATE FUNCTION madlib.__hopper_space(space text, what text, grid boolean DEFAULT false) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    j jsonb;
    k text;
    v jsonb;
    out jsonb := '{}';
    subs jsonb := '[]';
    s jsonb;
BEGIN
    IF space IS NULL OR pg_catalog.btrim(space) OPERATOR(pg_catalog.=) '' THEN
        RETURN '{}';
    END IF;
    BEGIN
        j := pg_catalog.regexp_replace(pg_catalog.regexp_replace(pg_catalog.regexp_replace(
                 pg_catalog.replace(space, '''', '"'), '\mTrue\M', 'true', 'g'), '\mFalse\M', 'false', 'g'),
                 '\mNone\M', 'null', 'g')::jsonb;
    EXCEPTION WHEN invalid_text_representation THEN
        RAISE EXCEPTION 'invalid % %', what, space USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Write it as MADlib does: a dict of lists, e.g. {''lr'': [0.0001, 0.1, ''log''], ''optimizer'': [''Adam'']}.';
    END;
    IF pg_catalog.jsonb_typeof(j) OPERATOR(pg_catalog.<>) 'object' THEN
        RAISE EXCEPTION '% must be a dict', what USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR k, v IN SELECT e.key, e.value FROM pg_catalog.jsonb_each(j) e LOOP
        IF k OPERATOR(pg_catalog.=) 'optimizer_params_list' AND pg_catalog.jsonb_typeof(v) OPERATOR(pg_catalog.=) 'array' THEN
            subs := '[]';
            FOR s IN SELECT e.value FROM pg_catalog.jsonb_array_elements(v) e LOOP
                subs := subs OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_array(madlib.__hopper_space(s::text, what, grid));
            END LOOP;
            out := out OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object(k, subs);
        ELSIF pg_catalog.jsonb_typeof(v) OPERATOR(pg_catalog.=) 'array' AND pg_catalog.jsonb_array_length(v) OPERATOR(pg_catalog.=) 3
              AND pg_catalog.jsonb_typeof(v OPERATOR(pg_catalog.->) 2) OPERATOR(pg_catalog.=) 'string'
              AND (v OPERATOR(pg_catalog.->>) 2) IN ('linear', 'log', 'log_near_one') THEN
            IF (v OPERATOR(pg_catalog.->>) 2) OPERATOR(pg_catalog.=) 'log_near_one' THEN
                -- MADlib's 'log_near_one' (momentum-like numbers: 1 - x with x log-uniform in [1 - high,
                -- 1 - low]); hopper draws uniformly or log-uniformly, so the range becomes 64 values at
                -- evenly spaced quantiles of that distribution, one of which each configuration draws.
                -- (Grid search would try all 64: refused as hopper refuses the other ranges there.)
                IF grid THEN
                    RAISE EXCEPTION 'grid search cannot use the range % of "%" in %', v, k, what
                        USING ERRCODE = 'invalid_parameter_value', DETAIL = 'Grid search tries every listed value.',
                              HINT = 'List the values to try, or use search_type => ''random''.';
                END IF;
                IF NOT ((v OPERATOR(pg_catalog.->>) 0)::float8 OPERATOR(pg_catalog.<) 1
                        AND (v OPERATOR(pg_catalog.->>) 1)::float8 OPERATOR(pg_catalog.<) 1) THEN
                    RAISE EXCEPTION '''log_near_one'' range of % must lie below 1', k USING ERRCODE = 'invalid_parameter_value';
                END IF;
                out := out OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object(k, (
                    -- (OPERATOR() binds all operators alike, left to right: hence every parenthesis.)
                    SELECT pg_catalog.jsonb_agg(1 OPERATOR(pg_catalog.-) (10 OPERATOR(pg_catalog.^) (lo OPERATOR(pg_catalog.+)
                               ((hi OPERATOR(pg_catalog.-) lo) OPERATOR(pg_catalog.*) ((i OPERATOR(pg_catalog.-) 0.5) OPERATOR(pg_catalog./) 64))))
                               ORDER BY i)
                    FROM pg_catalog.generate_series(1, 64) i,
                         pg_catalog.log(1 OPERATOR(pg_catalog.-) (v OPERATOR(pg_catalog.->>) 0)::float8) lo,
                         pg_catalog.log(1 OPERATOR(pg_catalog.-) (v OPERATOR(pg_catalog.->>) 1)::float8) hi));
                CONTINUE;
            END IF;
            out := out OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object(k, pg_catalog.jsonb_build_object(
                       CASE WHEN (v OPERATOR(pg_catalog.->>) 2) OPERATOR(pg_catalog.=) 'log' THEN 'log_uniform' ELSE 'uniform' END,
                       pg_catalog.jsonb_build_array(v OPERATOR(pg_catalog.->) 0, v OPERATOR(pg_catalog.->) 1)));
        ELSE
            out := out OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object(k, v);
        END IF;
    END LOOP;
    RETURN out;
END $$;

-- ---- preprocessors ---------------------------------------------------------------------------
-- MADlib 2.x's packed table beside hopper's: hopper trains from its arrays, renamed here
-- hopper_independent_var and hopper_dependent_var (real[], unchanged: hopper reads a packed table's
-- arrays under these names where it has no independent_var, packed_array_columns), so that a
-- MADlib script may rename its own columns to any name (MADlib's fit test renames buffer_id to
-- dependent_var, the name MADlib 1.x gave its labels); MADlib's scripts read their own columns, added here --
-- <x> and <y> (named as independent_varname and dependent_varname) as MADlib stores them, little-endian
-- float32 and int16 bytes (hopper.float32_bytes, int16_bytes; <y> as float32 where the target is not
-- small integers: a regression target MADlib does not pack), with <x>_shape (rows, then the
-- dimensions of the images: {18,2,2,3}) and <y>_shape; buffer_id numbers buffers from 0 already. The
-- buffers hold MADlib's rows: hopper.preprocess(buffer_fill => 'full'). The summary gets
-- <y>_class_values (of the dependent variable's type), distribution_rules, __internal_gpu_config__,
-- source_table and output_table as the caller named them, buffer_size as MADlib computes it (the
-- rows of the fullest buffer), and MADlib 2.x's types (__hopper_madlib_summary_types).
CREATE FUNCTION madlib.__hopper_madlib_packed(output_table text, source_table text, dependent_varname text,
                                              independent_varname text, source_given text, output_given text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    packed regclass := madlib.__hopper_quote_name(output_table)::regclass;
    summary regclass := madlib.__hopper_quote_name(output_table, '_summary')::regclass;
    x text := btrim(independent_varname);
    y text := btrim(dependent_varname);
    dims int4[];
    hopper_columns text[] := ARRAY['dist_key', 'buffer_id', 'hopper_independent_var', 'hopper_dependent_var',
                                   'independent_var_shape', 'dependent_var_shape'];
    small_integers boolean;
BEGIN
    EXECUTE format('ALTER TABLE %s RENAME independent_var TO hopper_independent_var', packed);
    EXECUTE format('ALTER TABLE %s RENAME dependent_var TO hopper_dependent_var', packed);
    -- A single column (MADlib's docs'): the image dimensions of its arrays; an expression or a list of
    -- columns: hopper's flat width.
    IF x ~ '^([[:alpha:]_][[:alnum:]_$]*|"([^"]|"")+")$' AND y ~ '^([[:alpha:]_][[:alnum:]_$]*|"([^"]|"")+")$' THEN
        x := (parse_ident(x))[1];
        y := (parse_ident(y))[1];
        EXECUTE format('SELECT ARRAY(SELECT array_length(s.v, d) FROM generate_series(1, array_ndims(s.v)) d ORDER BY d)
                        FROM (SELECT %I AS v FROM %s WHERE %I IS NOT NULL LIMIT 1) s',
                       x, madlib.__hopper_quote_name(source_table)::regclass, x) INTO dims;
        -- (Columns named as hopper's own keep hopper's: independent_var_shape is its shape already.)
        IF NOT x || '_shape' = ANY (hopper_columns) THEN
            EXECUTE format('ALTER TABLE %s ADD COLUMN IF NOT EXISTS %I int4[]', packed, x || '_shape');
            EXECUTE format('UPDATE %s SET %I = CASE WHEN cardinality($1) > 1 THEN ARRAY[independent_var_shape[1]] || $1
                                                  ELSE independent_var_shape END', packed, x || '_shape')
                USING dims;
        END IF;
        IF NOT y || '_shape' = ANY (hopper_columns || (x || '_shape')) THEN
            EXECUTE format('ALTER TABLE %s ADD COLUMN IF NOT EXISTS %I int4[]', packed, y || '_shape');
            EXECUTE format('UPDATE %s SET %I = dependent_var_shape', packed, y || '_shape');
        END IF;
        IF NOT x = ANY (hopper_columns) THEN
            EXECUTE format('ALTER TABLE %s ADD COLUMN IF NOT EXISTS %I bytea', packed, x);
            EXECUTE format('UPDATE %s SET %I = hopper.float32_bytes(hopper_independent_var)', packed, x);
        END IF;
        IF NOT y = ANY (hopper_columns || x) THEN
            EXECUTE format('SELECT coalesce(bool_and(v = round(v) AND abs(v) <= 32767), true)
                            FROM %s, unnest(hopper_dependent_var) v', packed) INTO small_integers;
            EXECUTE format('ALTER TABLE %s ADD COLUMN IF NOT EXISTS %I bytea', packed, y);
            EXECUTE format('UPDATE %s SET %I = %s', packed, y,
                           CASE WHEN small_integers THEN 'hopper.int16_bytes(hopper_dependent_var::int2[])'
                                ELSE 'hopper.float32_bytes(hopper_dependent_var)' END);
        END IF;
    END IF;
    PERFORM madlib.__hopper_class_values_column(summary);
    EXECUTE format('ALTER TABLE %s ADD COLUMN IF NOT EXISTS distribution_rules text,
                    ADD COLUMN IF NOT EXISTS __internal_gpu_config__ text', summary);
    EXECUTE format('UPDATE %s SET distribution_rules = ''all_segments'', __internal_gpu_config__ = ''all_segments'',
                    source_table = $1, output_table = $2,
                    buffer_size = (SELECT max(independent_var_shape[1]) FROM %s)', summary, packed)
        USING source_given, output_given;
    PERFORM madlib.__hopper_madlib_summary_types(summary);
END $$;

-- MADlib 2.x's types in a summary (of packed data or of a model): a variable's name, type and number
-- of classes are arrays, one per variable (dependent_varname[0] in MADlib's tests), normalizing_const
-- is real. These are the user's, as MADlib's are (MADlib's tests change a model's dependent_vartype
-- and <y>_class_values before predicting); hopper reads its own, kept as hopper_dependent_varname,
-- hopper_independent_varname and hopper_dependent_vartype (summary_text_column).
CREATE FUNCTION madlib.__hopper_madlib_summary_types(summary regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c text;
BEGIN
    FOREACH c IN ARRAY ARRAY['dependent_varname', 'independent_varname', 'dependent_vartype'] LOOP
        IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = summary AND attname = c AND atttypid = 'text'::regtype
                   AND NOT attisdropped) THEN
            EXECUTE format('ALTER TABLE %1$s ADD COLUMN %2$I text', summary, 'hopper_' || c);
            EXECUTE format('UPDATE %1$s SET %2$I = %3$I', summary, 'hopper_' || c, c);
            EXECUTE format('ALTER TABLE %s ALTER COLUMN %I TYPE text[] USING ARRAY[%I]', summary, c, c);
        END IF;
    END LOOP;
    IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = summary AND attname = 'num_classes'
               AND atttypid = 'int4'::regtype AND NOT attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN num_classes TYPE int4[]
                        USING CASE WHEN num_classes IS NULL THEN NULL ELSE ARRAY[num_classes] END', summary);
    END IF;
    IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = summary AND attname = 'normalizing_const'
               AND atttypid = 'float8'::regtype AND NOT attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN normalizing_const TYPE real', summary);
    END IF;
END $$;

-- The column a variable names when it is one (plain or quoted) identifier naming a column of the
-- table, with its type's category ('A' for arrays, 'S' strings, 'B' booleans, ...); NULLs otherwise
-- (an expression, a list of columns, no such table or column).
CREATE FUNCTION madlib.__hopper_column(table_name text, variable text, OUT col text, OUT category "char")
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF table_name IS NULL OR variable IS NULL OR to_regclass(table_name) IS NULL
       OR btrim(variable) !~ '^([[:alpha:]_][[:alnum:]_$]*|"([^"]|"")+")$' THEN
        RETURN;
    END IF;
    SELECT a.attname, t.typcategory INTO col, category FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
    WHERE a.attrelid = to_regclass(table_name) AND a.attname = (parse_ident(btrim(variable)))[1] AND NOT a.attisdropped;
END $$;

-- MADlib's images are N-dimensional arrays (rgb {{{r,g,b},...},...}); hopper reads features as flat
-- arrays. A source whose independent column x holds N-dimensional arrays is read through a temporary
-- copy, pg_temp.__hopper_flat_source, of x flattened in row-major order (as Keras' Flatten does)
-- and the column other (the dependent variable, or the id); other sources are read as they are.
-- Returns the table to read.
CREATE FUNCTION madlib.__hopper_flat_source(source_table text, x text, other text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    src regclass;
    multi boolean;
    cols text;
    c record := madlib.__hopper_column(source_table, x);
BEGIN
    IF c.category IS DISTINCT FROM 'A' THEN
        RETURN source_table;
    END IF;
    src := source_table::regclass;
    x := c.col;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE array_ndims(%I) > 1)', src, x) INTO multi;
    IF NOT multi THEN
        RETURN source_table;
    END IF;
    -- Only the columns read: an image table's other columns (paths, raw bytes) stay where they are.
    IF other ~ '^\s*([[:alpha:]_][[:alnum:]_$]*|"([^"]|"")+")\s*$' THEN
        other := (parse_ident(btrim(other)))[1];
    END IF;
    SELECT string_agg(CASE WHEN a.attname = x THEN format('ARRAY(SELECT unnest(t.%1$I)) AS %1$I', a.attname)
                           ELSE format('t.%I', a.attname) END, ', ' ORDER BY a.attnum)
    INTO cols FROM pg_attribute a WHERE a.attrelid = src AND a.attnum > 0 AND NOT a.attisdropped
                                    AND (a.attname = x OR a.attname = other OR other IS NULL
                                         OR NOT EXISTS (SELECT 1 FROM pg_attribute o WHERE o.attrelid = src
                                                        AND o.attname = other AND NOT o.attisdropped));
    PERFORM madlib.__hopper_drop_temp_table('__hopper_flat_source');
    EXECUTE format('CREATE TEMP TABLE __hopper_flat_source AS SELECT %s FROM %s t', cols, src);
    RETURN 'pg_temp.__hopper_flat_source';
END $$;

-- MADlib takes NULL labels as a class of their own, sorted first and shown NULL; hopper refuses NULL
-- labels. A dependent column of strings, booleans or numbers with NULLs is read through the session's
-- copy (pg_temp.__hopper_flat_source, made here if __hopper_flat_source did not make it) with NULL
-- as a value that sorts first, when packing training data (null_name NULL): '' for strings and
-- booleans (read as text), one less than the least label for numbers -- which __hopper_null_class_done
-- names <NULL> in hopper's class_values once packed; and as <NULL> (read as text) when packing
-- validation data against such a table (null_name '<NULL>'). Other sources are read as they are.
-- Returns the table to read.
CREATE FUNCTION madlib.__hopper_null_class_source(read_table text, y text, null_name text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c record := madlib.__hopper_column(read_table, y);
    col text := c.col;
    as_text boolean := null_name IS NOT NULL OR c.category IN ('S', 'B');
    has_null boolean;
    clash boolean;
BEGIN
    IF c.category IS NULL OR c.category NOT IN ('S', 'B', 'N') THEN
        RETURN read_table;
    END IF;
    PERFORM madlib.__hopper_require_builtin_columns(read_table::regclass, ARRAY[col], 'dependent');
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE %I IS NULL)', read_table::regclass, col) INTO has_null;
    IF NOT has_null THEN
        RETURN read_table;
    END IF;
    IF as_text THEN
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE %I::text IN (%L, ''<NULL>''))', read_table::regclass, col,
                       COALESCE(null_name, '')) INTO clash;
        IF clash THEN
            RAISE EXCEPTION 'dependent column "%" has NULL labels and the label ''%''', col, COALESCE(null_name, '')
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = 'hopper_madlib names the class of NULL labels <NULL> (packing them as '''' first).',
                      HINT = 'Rename that label, or filter out the NULL labels.';
        END IF;
    END IF;
    IF read_table <> 'pg_temp.__hopper_flat_source' THEN
        PERFORM madlib.__hopper_drop_temp_table('__hopper_flat_source');
        EXECUTE format('CREATE TEMP TABLE __hopper_flat_source AS SELECT * FROM %s', read_table::regclass);
    END IF;
    IF as_text THEN
        EXECUTE format('ALTER TABLE pg_temp.__hopper_flat_source ALTER COLUMN %1$I TYPE text USING coalesce(%1$I::text, %2$L)',
                       col, COALESCE(null_name, ''));
    ELSE
        EXECUTE format('UPDATE pg_temp.__hopper_flat_source SET %1$I = (SELECT min(%1$I) - 1 FROM pg_temp.__hopper_flat_source)
                        WHERE %1$I IS NULL', col);
    END IF;
    RETURN 'pg_temp.__hopper_flat_source';
END $$;

-- Training data packed with NULL labels as a first class: hopper's class_values name it <NULL>, and
-- the summary keeps the type of the caller's column (the copy read may be text).
CREATE FUNCTION madlib.__hopper_null_class_done(output_table text, source_table text, y text, read_table text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c record := madlib.__hopper_column(source_table, y);
    has_null boolean;
BEGIN
    IF read_table IS NOT DISTINCT FROM source_table OR c.col IS NULL THEN
        RETURN;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE %I IS NULL)', source_table::regclass, c.col) INTO has_null;
    IF has_null THEN
        EXECUTE format('UPDATE %s SET class_values[1] = ''<NULL>'',
                            dependent_vartype = (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
                                                 WHERE a.attrelid = $1::regclass AND a.attname = $2)',
                       madlib.__hopper_quote_name(output_table, '_summary')::regclass)
            USING source_table, c.col;
    END IF;
END $$;

-- The flattened copy goes once packed (the summary names the caller's source: __hopper_madlib_packed).
CREATE FUNCTION madlib.__hopper_flat_source_done(source_table text, read_table text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF read_table IS DISTINCT FROM source_table THEN
        DROP TABLE pg_temp.__hopper_flat_source;
    END IF;
END $$;

-- MADlib one-hot encodes a scalar dependent variable whatever its type (integers and floats are
-- classes too: {4.0,4.2,5.0}); an array is packed as numbers ('auto': hopper's regression target),
-- which a one-hot array of integers or booleans then turns into classes (__hopper_one_hot_done).
CREATE FUNCTION madlib.__hopper_response_type(source_table text, dependent_varname text) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RETURN CASE WHEN (madlib.__hopper_column(source_table, dependent_varname)).category <> 'A' THEN 'classification'
                ELSE 'auto' END;
END $$;

-- MADlib takes a dependent variable that is an array as one-hot encoded already (its preprocessor
-- casts it to smallint[]) and trains a classifier over its columns, its summary's <y>_class_values
-- NULL: madlib_keras_predict then names the classes by their index, 0 .. n - 1 ('response' gives the
-- index of the first-ranked column). hopper.preprocess packs a numeric array as a regression target
-- and refuses a boolean one, so the facade packs such a column as numbers (a boolean array through
-- the session's copy, pg_temp.__hopper_flat_source, as smallint[]: __hopper_one_hot_source) and then
-- makes the packed table a classifier's (__hopper_one_hot_done): hopper's class_values '0' .. 'n-1'.
-- Arrays of integers and booleans only: a float array stays hopper's regression target (MADlib would
-- truncate its values to smallint). The column's element type when it is such an array, else NULL.
CREATE FUNCTION madlib.__hopper_one_hot_type(source_table text, dependent_varname text) RETURNS regtype
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c record := madlib.__hopper_column(source_table, dependent_varname);
BEGIN
    IF c.category IS DISTINCT FROM 'A' THEN
        RETURN NULL;
    END IF;
    RETURN (SELECT t.typelem::regtype FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
            WHERE a.attrelid = to_regclass(source_table) AND a.attname = c.col AND NOT a.attisdropped
              AND t.typelem IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'bool'::regtype));
END $$;

-- The type of the column a variable names (format_type's spelling), else NULL.
CREATE FUNCTION madlib.__hopper_column_type(source_table text, variable text) RETURNS text
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT pg_catalog.format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_attribute a
    WHERE a.attrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(source_table)
      AND a.attname OPERATOR(pg_catalog.=) (madlib.__hopper_column(source_table, variable)).col AND NOT a.attisdropped;
END;

-- The table to read for a one-hot array dependent variable: a boolean array's read as smallint[]
-- through the session's copy (made here unless read_table is that copy already).
CREATE FUNCTION madlib.__hopper_one_hot_source(read_table text, source_table text, y text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    col text := (madlib.__hopper_column(source_table, y)).col;
BEGIN
    IF madlib.__hopper_one_hot_type(source_table, y) IS DISTINCT FROM 'bool'::regtype THEN
        RETURN read_table;
    END IF;
    IF read_table <> 'pg_temp.__hopper_flat_source' THEN
        PERFORM madlib.__hopper_drop_temp_table('__hopper_flat_source');
        EXECUTE format('CREATE TEMP TABLE __hopper_flat_source AS SELECT * FROM %s', read_table::regclass);
    END IF;
    EXECUTE format('ALTER TABLE pg_temp.__hopper_flat_source ALTER COLUMN %1$I TYPE int2[] USING %1$I::int4[]::int2[]', col);
    RETURN 'pg_temp.__hopper_flat_source';
END $$;

-- A training table packed from a one-hot array (__hopper_one_hot_type): a classifier's, of classes
-- '0' .. 'n-1' (n the array's width) named by integers (hopper's dependent_vartype: MADlib's is the
-- column's type, __hopper_one_hot_madlib). num_classes, when
-- given, must be that width (MADlib pads no array).
CREATE FUNCTION madlib.__hopper_one_hot_done(output_table text, source_table text, y text, num_classes integer[])
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    summary regclass := madlib.__hopper_quote_name(output_table, '_summary')::regclass;
    width int;
BEGIN
    EXECUTE format('SELECT dependent_dim FROM %s', summary) INTO width;
    IF num_classes[1] IS NOT NULL AND num_classes[1] <> width THEN
        RAISE EXCEPTION 'num_classes % is not the width of the one-hot dependent variable %', num_classes[1], y
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its arrays have %s elements, one per class.', width),
                  HINT = 'Leave out num_classes for a dependent variable that is one-hot encoded already.';
    END IF;
    EXECUTE format('UPDATE %s SET response_type = ''classification'', num_classes = $1,
                        class_values = ARRAY(SELECT i::text FROM generate_series(0, $1 - 1) i), dependent_vartype = ''integer''',
                   summary)
        USING width;
END $$;

-- MADlib's view of a summary (of packed data or of a model) of a one-hot array dependent variable:
-- dependent_vartype the array's type (vartype; hopper's, hopper_dependent_vartype, is integer: the
-- classes are the columns' indices) and <y>_class_values NULL, as MADlib's preprocessor leaves it
-- (its predictions then number the classes). Nothing when vartype is NULL.
CREATE FUNCTION madlib.__hopper_one_hot_madlib(summary regclass, vartype text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    y text;
BEGIN
    IF vartype IS NULL THEN
        RETURN;
    END IF;
    EXECUTE format('SELECT dependent_varname[1] FROM %s', summary) INTO y;
    EXECUTE format('UPDATE %s SET dependent_vartype = ARRAY[$1]', summary) USING vartype;
    IF y ~ '^([[:alpha:]_][[:alnum:]_$]*|"([^"]|"")+")$' THEN
        y := (parse_ident(y))[1] || '_class_values';
        IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = summary AND attname = y AND NOT attisdropped) THEN
            EXECUTE format('UPDATE %s SET %I = NULL', summary, y);
        END IF;
    END IF;
END $$;

-- The one-hot array type a packed table's summary names (MADlib's dependent_vartype, an array of
-- integers or booleans, over classes '0' .. 'n-1' in hopper's class_values where it has them), else
-- NULL: a model trained on it gets MADlib's view of it (__hopper_one_hot_madlib).
CREATE FUNCTION madlib.__hopper_one_hot_vartype(packed text) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    summary regclass := to_regclass(madlib.__hopper_quote_name(packed, '_summary'));
    vartype text;
BEGIN
    IF summary IS NULL OR NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = summary AND NOT attisdropped
                                        AND attname = 'dependent_vartype' AND atttypid = 'text[]'::regtype) THEN
        RETURN NULL;
    END IF;
    -- A table MADlib packed has no class_values of hopper's (__hopper_repacked numbers its classes).
    EXECUTE format('SELECT dependent_vartype[1] FROM %s WHERE cardinality(dependent_vartype) = 1 %s', summary,
                   CASE WHEN EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = summary AND NOT attisdropped
                                       AND attname = 'class_values' AND atttypid = 'text[]'::regtype)
                        THEN 'AND class_values = ARRAY(SELECT i::text FROM generate_series(0, cardinality(class_values) - 1) i)'
                        ELSE '' END) INTO vartype;
    RETURN CASE WHEN vartype IN ('smallint[]', 'integer[]', 'bigint[]', 'boolean[]') THEN vartype END;
END $$;

-- distribution_rules places buffers on Greenplum segments (with GPUs); on PostgreSQL MADlib ignores
-- it and its summary says all_segments. So does hopper_madlib: hopper spreads the buffers over all
-- of its segments.
CREATE FUNCTION madlib.__hopper_distribution_rules(distribution_rules text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF distribution_rules IS NOT NULL AND lower(distribution_rules) <> 'all_segments' THEN
        RAISE NOTICE 'distribution_rules % is ignored on PostgreSQL, as MADlib does', distribution_rules
            USING DETAIL = 'hopper spreads the buffers over all of its segments.';
    END IF;
END $$;

-- Several dependent variables (MADlib's multi-input / multi-output data: 'class_text, class_text2' with
-- 'attributes, attributes2'): packed as MADlib packs them, one column per variable -- each independent
-- one a rows x features float4 matrix divided by normalizing_const, each dependent one a rows x
-- classes one-hot matrix -- with their <name>_shape, in buffers of buffer_size rows (one buffer when
-- NULL), and MADlib's summary (dependent_varname, independent_varname and dependent_vartype as arrays,
-- <y>_class_values, num_classes per dependent variable). hopper trains single-output models:
-- training on such a table is refused (__hopper_single_output), everything else about it works.
-- training_summary: the training table's summary when packing validation data (its classes).
CREATE FUNCTION madlib.__hopper_multi_preprocess(source_table text, output_table text, dependent_varname text,
                                                 independent_varname text, buffer_size integer, normalizing_const real,
                                                 num_classes integer[], training_summary regclass)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    src regclass := source_table::regclass;
    out text := madlib.__hopper_quote_name(output_table);
    summary text := madlib.__hopper_quote_name(output_table, '_summary');
    ys text[] := ARRAY(SELECT (parse_ident(btrim(c)))[1] FROM unnest(string_to_array(dependent_varname, ',')) c);
    xs text[] := ARRAY(SELECT (parse_ident(btrim(c)))[1] FROM unnest(string_to_array(independent_varname, ',')) c);
    types text[];
    classes text[];
    counts int4[] := '{}';
    cols text := '';
    shapes text := '';
    summary_cols text := '';
    not_null text;
    unseen text;
    rows int8;
    y text;
    x text;
    i int;
BEGIN
    SELECT array_agg(format_type(a.atttypid, a.atttypmod) ORDER BY u.i) INTO types
    FROM unnest(ys) WITH ORDINALITY u(n, i) JOIN pg_attribute a ON a.attrelid = src AND a.attname = u.n AND NOT a.attisdropped;
    IF cardinality(types) IS DISTINCT FROM cardinality(ys) THEN
        RAISE EXCEPTION 'dependent_varname % names a column that % does not have', dependent_varname, source_table
            USING ERRCODE = 'undefined_column';
    END IF;
    PERFORM madlib.__hopper_require_builtin_columns(src, ys, 'dependent');
    PERFORM madlib.__hopper_require_builtin_columns(src, xs, 'independent');
    IF num_classes IS NOT NULL AND cardinality(num_classes) <> cardinality(ys) THEN
        RAISE EXCEPTION 'num_classes % must have one value per dependent variable (%)', num_classes, cardinality(ys)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF training_summary IS NOT NULL THEN
        PERFORM madlib.__hopper_require_builtin_columns(training_summary, NULL, 'summary table');
        EXECUTE format('SELECT normalizing_const FROM %s', training_summary) INTO normalizing_const;
    END IF;
    not_null := (SELECT string_agg(format('%I IS NOT NULL', n), ' AND ') FROM unnest(ys || xs) n);
    FOR i IN 1 .. cardinality(ys) LOOP
        y := ys[i];
        IF training_summary IS NULL THEN
            EXECUTE format('SELECT ARRAY(SELECT DISTINCT %I FROM %s WHERE %I IS NOT NULL ORDER BY 1)::text[]', y, src, y) INTO classes;
            IF num_classes[i] < cardinality(classes) THEN
                RAISE EXCEPTION 'num_classes % is less than the % classes of %', num_classes[i], cardinality(classes), y
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            classes := classes || array_fill(NULL::text, ARRAY[GREATEST(COALESCE(num_classes[i], 0) - cardinality(classes), 0)]);
        ELSE
            EXECUTE format('SELECT %I FROM %s', y || '_class_values', training_summary) INTO classes;
            EXECUTE format('SELECT string_agg(DISTINCT %1$I::text, '', '') FROM %2$s WHERE %1$I IS NOT NULL AND %1$I::text <> ALL (array_remove($1, NULL))',
                           y, src) INTO unseen USING classes;
            IF unseen IS NOT NULL THEN
                RAISE EXCEPTION 'class values % of % do not occur in the training data', unseen, y
                    USING ERRCODE = 'data_exception';
            END IF;
        END IF;
        counts := counts || cardinality(classes);
        cols := cols || format(', array_agg(ARRAY(SELECT ((c.v = s.%1$I::text) IS TRUE)::int4::float4
                                                   FROM unnest(%2$L::text[]) WITH ORDINALITY c(v, k) ORDER BY c.k) ORDER BY s.n) AS %1$I',
                               y, classes);
        summary_cols := summary_cols || format(', %L::text[] AS %I', classes, y || '_class_values');
    END LOOP;
    FOREACH x IN ARRAY xs LOOP
        cols := cols || format(', array_agg(ARRAY(SELECT (v / %2$s)::float4 FROM unnest(s.%1$I) v) ORDER BY s.n) AS %1$I',
                               x, COALESCE(normalizing_const, 1.0));
    END LOOP;
    FOREACH x IN ARRAY ys || xs LOOP
        shapes := shapes || format(', ADD COLUMN %I int4[]', x || '_shape');
    END LOOP;
    EXECUTE format('SELECT count(*) FROM %s WHERE %s', src, not_null) INTO rows;
    IF rows = 0 THEN
        RAISE EXCEPTION 'no rows to pack' USING ERRCODE = 'data_exception', DETAIL = format('%s has no row without NULLs.', source_table);
    END IF;
    buffer_size := COALESCE(buffer_size, rows);
    EXECUTE format('CREATE TABLE %s AS SELECT (s.n / $1)::int4 AS buffer_id %s
                    FROM (SELECT row_number() OVER (ORDER BY random()) - 1 AS n, * FROM %s WHERE %s) s
                    GROUP BY s.n / $1', out, cols, src, not_null) USING buffer_size;
    EXECUTE format('ALTER TABLE %s %s', out, substr(shapes, 2));
    EXECUTE format('UPDATE %s SET %s', out, (SELECT string_agg(format('%I = ARRAY[array_length(%I, 1), array_length(%I, 2)]',
                                                                      n || '_shape', n, n), ', ') FROM unnest(ys || xs) n));
    EXECUTE format('CREATE TABLE %s AS SELECT $1 AS source_table, $2 AS output_table, $3 AS dependent_varname,
                        $4 AS independent_varname, $5 AS dependent_vartype %s, $6 AS buffer_size,
                        $7 AS normalizing_const, $8 AS num_classes, ''all_segments''::text AS distribution_rules,
                        ''all_segments''::text AS __internal_gpu_config__', summary, summary_cols)
        USING src::text, output_table, ys, xs, types, buffer_size, COALESCE(normalizing_const, 1.0), counts;
END $$;

-- A packed table built by hand as MADlib 2.x lays one out -- buffer_id, <x> and <y> as bytes with
-- <x>_shape and <y>_shape, a summary of MADlib's columns (dependent_varname and independent_varname
-- text[], <y>_class_values, normalizing_const, dependent_vartype) -- but without hopper's arrays:
-- MADlib's tests make them from another packed table. hopper trains from its own columns, so such a
-- table is packed again, row for row, into a hopper packed table of this transaction beside it
-- (<schema>.__hopper_repacked_<backend pid>_<n>, dropped by __hopper_repacked_done): the features
-- as they are (divided by normalizing_const already), the one-hot labels as the bytes hold them, the
-- classes named by <y>_class_values (a NULL first is the class of NULL labels, <NULL>; NULLs last
-- are padding, <padding k>). Returns the table hopper trains from: that copy, or the table itself
-- (hopper's own packed tables, and anything else, which hopper's errors then name).
CREATE FUNCTION madlib.__hopper_repacked(packed text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t regclass := to_regclass(packed);
    summary regclass := to_regclass(madlib.__hopper_quote_name(packed, '_summary'));
    s jsonb;
    x text;
    y text;
    classes text[];
    names text[];
    first_named int;
    last_named int;
    width int;
    copy text;
    one_hot boolean := false;
BEGIN
    IF t IS NULL OR summary IS NULL
       OR EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = t AND attname IN ('independent_var', 'hopper_independent_var')
                    AND atttypid = 'real[]'::regtype AND NOT attisdropped)
       OR (SELECT count(*) FROM pg_attribute WHERE attrelid = summary AND NOT attisdropped
             AND attname IN ('dependent_varname', 'independent_varname') AND atttypid = 'text[]'::regtype) <> 2 THEN
        RETURN packed;
    END IF;
    PERFORM madlib.__hopper_require_builtin_columns(summary, NULL, 'summary table');
    EXECUTE format('SELECT to_jsonb(s) FROM %s s LIMIT 1', summary) INTO s;
    y := s->'dependent_varname'->>0;
    x := s->'independent_varname'->>0;
    -- The columns read, by name and by their exact built-in types: a shape column of another role's
    -- type ran that role's implicit cast (to integer, in generate_series) as the caller, a superuser
    -- training on the table included (a hostile review). Another role's type is refused by name.
    PERFORM madlib.__hopper_require_builtin_columns(t, ARRAY[x, y, x || '_shape', y || '_shape', 'buffer_id'],
                                                    'packed table');
    IF jsonb_array_length(s->'dependent_varname') <> 1 OR jsonb_array_length(s->'independent_varname') <> 1
       OR (SELECT count(*) FROM pg_attribute WHERE attrelid = t AND NOT attisdropped
             AND ((attname IN (x, y) AND atttypid = 'bytea'::regtype)
                  OR (attname IN (x || '_shape', y || '_shape') AND atttypid = 'int4[]'::regtype)
                  OR (attname = 'buffer_id' AND atttypid IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)))) <> 5 THEN
        RETURN packed;
    END IF;
    PERFORM madlib.__hopper_drop_temp_table('__hopper_madlib_rows');
    -- Each buffer's bytes are decoded once (OFFSET 0 keeps the planner from pulling the decoding
    -- up into the select list, where it ran once per row: quadratic in the buffer's rows).
    EXECUTE format('CREATE TEMP TABLE __hopper_madlib_rows AS
                    SELECT w.xs[(r.i - 1) * w.xd + 1 : r.i * w.xd] AS x,
                           w.ys[(r.i - 1) * w.yd + 1 : r.i * w.yd] AS y
                    FROM %3$s b,
                         LATERAL (SELECT hopper.float32_array(b.%1$I) AS xs, hopper.int16_array(b.%2$I) AS ys,
                                         octet_length(b.%1$I) / 4 / b.%4$I[1] AS xd,
                                         octet_length(b.%2$I) / 2 / b.%5$I[1] AS yd OFFSET 0) w,
                         generate_series(1, b.%4$I[1]) r(i)
                    ORDER BY b.buffer_id, r.i', x, y, t, x || '_shape', y || '_shape');
    copy := format('%I.%I', (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = t),
                   format('__hopper_repacked_%s_%s', pg_backend_pid(),
                          (SELECT count(*) FROM pg_class WHERE relname LIKE '\_\_hopper\_repacked\_%')));
    EXECUTE format('SELECT max(%I[1]) FROM %s', x || '_shape', t) INTO width;
    PERFORM hopper.preprocess('pg_temp.__hopper_madlib_rows', copy, 'y', 'x', buffer_size => width,
                              scale => 'none', response_type => 'regression', buffer_fill => 'full');
    DROP TABLE pg_temp.__hopper_madlib_rows;
    -- The classes, as <y>_class_values names them (when it names one per one-hot column).
    -- (NULL for a one-hot array, as MADlib's preprocessor leaves it: no classes named.)
    classes := ARRAY(SELECT jsonb_array_elements_text(CASE WHEN jsonb_typeof(s->(y || '_class_values')) = 'array'
                                                           THEN s->(y || '_class_values') END));
    EXECUTE format('SELECT dependent_dim FROM %s', madlib.__hopper_quote_name(copy, '_summary')::regclass) INTO width;
    first_named := (SELECT min(i) FROM generate_subscripts(classes, 1) i WHERE classes[i] IS NOT NULL);
    last_named := (SELECT max(i) FROM generate_subscripts(classes, 1) i WHERE classes[i] IS NOT NULL);
    IF cardinality(classes) = width AND first_named IS NOT NULL THEN
        IF first_named > 2 OR EXISTS (SELECT 1 FROM generate_series(first_named, last_named) i WHERE classes[i] IS NULL) THEN
            RAISE EXCEPTION 'summary table %: % names a NULL class where MADlib has none', summary, y || '_class_values'
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = 'MADlib''s class values have the class of NULL labels first and padding last.';
        END IF;
        names := ARRAY(SELECT CASE WHEN classes[i] IS NOT NULL THEN classes[i]
                                   WHEN i < first_named THEN '<NULL>'
                                   ELSE format('<padding %s>', i - last_named) END
                       FROM generate_subscripts(classes, 1) i ORDER BY i);
        EXECUTE format('UPDATE %s SET response_type = ''classification'', class_values = $1, num_classes = $2',
                       madlib.__hopper_quote_name(copy, '_summary')::regclass) USING names, width;
    ELSIF cardinality(classes) = 0 AND s->'dependent_vartype'->>0 IN ('smallint[]', 'integer[]', 'bigint[]', 'boolean[]') THEN
        -- A one-hot array (<y>_class_values NULL): classes numbered by their columns, as MADlib's
        -- predictions number them (__hopper_one_hot_type).
        EXECUTE format('UPDATE %s SET response_type = ''classification'', num_classes = $1,
                            class_values = ARRAY(SELECT i::text FROM generate_series(0, $1 - 1) i)',
                       madlib.__hopper_quote_name(copy, '_summary')::regclass) USING width;
        one_hot := true;
    END IF;
    EXECUTE format('UPDATE %s SET dependent_varname = $1, independent_varname = $2, dependent_vartype = $3,
                        normalizing_const = $4, source_table = $5',
                   madlib.__hopper_quote_name(copy, '_summary')::regclass)
        USING y, x, CASE WHEN one_hot THEN 'integer' ELSE COALESCE(s->'dependent_vartype'->>0, 'smallint[]') END,
              COALESCE((s->>'normalizing_const')::float8, 1.0), packed;
    RETURN copy;
END $$;

-- The copy __hopper_repacked made, dropped once trained from (nothing when it returned the table).
CREATE FUNCTION madlib.__hopper_repacked_done(packed text, read_table text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF read_table IS DISTINCT FROM packed THEN
        EXECUTE format('DROP TABLE %s, %s', read_table::regclass, madlib.__hopper_quote_name(read_table, '_summary')::regclass);
    END IF;
END $$;

-- hopper trains models of one output: data packed with several dependent variables is refused for
-- training (0A000), naming the limitation.
CREATE FUNCTION madlib.__hopper_single_output(source_table text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    several boolean := false;
BEGIN
    IF source_table IS NOT NULL AND EXISTS (
           SELECT 1 FROM pg_attribute a
           WHERE a.attrelid = to_regclass(madlib.__hopper_quote_name(source_table, '_summary'))
             AND a.attname = 'dependent_varname' AND a.atttypid = 'text[]'::regtype AND NOT a.attisdropped) THEN
        EXECUTE format('SELECT bool_or(cardinality(dependent_varname) > 1) FROM %s',
                       madlib.__hopper_quote_name(source_table, '_summary')::regclass) INTO several;
    END IF;
    IF several THEN
        PERFORM madlib.__hopper_unsupported(format('training on %s (several dependent variables: multi-output models)', source_table),
                                            'hopper''s models have one input and one output; such data packs as MADlib packs it, but hopper cannot train on it.',
                                            'Pack one dependent variable to train a model of it.');
    END IF;
END $$;

CREATE FUNCTION madlib.__hopper_training_preprocessor_dl(source_table text, output_table text, dependent_varname text,
                                                         independent_varname text, buffer_size integer,
                                                         normalizing_const real, num_classes integer[], distribution_rules text,
                                                         source_given text, output_given text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    read_table text;
    one_hot boolean;
BEGIN
    PERFORM madlib.__hopper_required_table(source_table, 'source_table', 'input');
    PERFORM madlib.__hopper_required_table(output_table, 'output_table', 'output');
    PERFORM madlib.__hopper_required(dependent_varname IS NOT NULL, 'dependent_varname');
    PERFORM madlib.__hopper_required(independent_varname IS NOT NULL, 'independent_varname');
    PERFORM madlib.__hopper_distribution_rules(distribution_rules);
    IF dependent_varname LIKE '%,%' THEN
        PERFORM madlib.__hopper_multi_preprocess(source_table, output_table, dependent_varname, independent_varname,
                                                 buffer_size, normalizing_const, num_classes, NULL);
        RETURN;
    END IF;
    -- num_classes (MADlib 2.x: one per dependent variable): more than the data's classes pads the
    -- one-hot vectors for classes still to come, as MADlib does (hopper names them <padding 1>, ...;
    -- MADlib's views of the class values show them NULL: __hopper_madlib_classes).
    IF cardinality(num_classes) > 1 THEN
        PERFORM madlib.__hopper_unsupported(format('num_classes %s (one per dependent variable)', num_classes),
                                            'hopper packs one dependent variable.',
                                            'Pass one dependent variable and one num_classes.');
    END IF;
    one_hot := madlib.__hopper_one_hot_type(source_table, dependent_varname) IS NOT NULL;
    read_table := madlib.__hopper_one_hot_source(madlib.__hopper_null_class_source(
                      madlib.__hopper_flat_source(source_table, independent_varname, dependent_varname),
                      dependent_varname, NULL), source_table, dependent_varname);
    PERFORM hopper.preprocess(read_table, output_table, dependent_varname, independent_varname,
                              buffer_size => buffer_size, normalizing_const => COALESCE(normalizing_const, 1.0),
                              scale => 'none',  -- MADlib divides by normalizing_const only
                              num_classes => CASE WHEN one_hot THEN NULL ELSE num_classes[1] END,
                              response_type => madlib.__hopper_response_type(source_table, dependent_varname),
                              buffer_fill => 'full');
    IF one_hot THEN
        PERFORM madlib.__hopper_one_hot_done(output_table, source_table, dependent_varname, num_classes);
    ELSE
        PERFORM madlib.__hopper_null_class_done(output_table, source_table, dependent_varname, read_table);
    END IF;
    PERFORM madlib.__hopper_flat_source_done(source_table, read_table);
    PERFORM madlib.__hopper_madlib_packed(output_table, source_table, dependent_varname, independent_varname,
                                          source_given, output_given);
    PERFORM madlib.__hopper_one_hot_madlib(madlib.__hopper_quote_name(output_table, '_summary')::regclass,
                                           CASE WHEN one_hot THEN madlib.__hopper_column_type(source_table, dependent_varname) END);
END $$;

CREATE FUNCTION madlib.training_preprocessor_dl(source_table varchar, output_table varchar, dependent_varname varchar,
                                                independent_varname varchar, buffer_size integer DEFAULT NULL,
                                                normalizing_const real DEFAULT 1.0, num_classes integer[] DEFAULT NULL,
                                                distribution_rules text DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_training_preprocessor_dl(madlib.__hopper_input_name(source_table),
               madlib.__hopper_output_name(output_table), dependent_varname, independent_varname, buffer_size,
               normalizing_const, num_classes, distribution_rules, source_table, output_table);
END;

CREATE FUNCTION madlib.__hopper_validation_preprocessor_dl(source_table text, output_table text, dependent_varname text,
                                                           independent_varname text, training_preprocessor_table text,
                                                           buffer_size integer, distribution_rules text,
                                                           source_given text, output_given text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    read_table text;
    one_hot boolean;
    training_summary regclass;
BEGIN
    PERFORM madlib.__hopper_required_table(source_table, 'source_table', 'input');
    PERFORM madlib.__hopper_required_table(output_table, 'output_table', 'output');
    PERFORM madlib.__hopper_required(dependent_varname IS NOT NULL, 'dependent_varname');
    PERFORM madlib.__hopper_required(independent_varname IS NOT NULL, 'independent_varname');
    PERFORM madlib.__hopper_required_table(training_preprocessor_table, 'training_preprocessor_table', 'input');
    PERFORM madlib.__hopper_distribution_rules(distribution_rules);
    IF dependent_varname LIKE '%,%' THEN
        PERFORM madlib.__hopper_multi_preprocess(source_table, output_table, dependent_varname, independent_varname,
                                                 buffer_size, NULL,
                                                 NULL, madlib.__hopper_quote_name(training_preprocessor_table, '_summary')::regclass);
        RETURN;
    END IF;
    read_table := madlib.__hopper_null_class_source(
                      madlib.__hopper_flat_source(source_table, independent_varname, dependent_varname),
                      dependent_varname, '<NULL>');
    -- A one-hot array packs as its numbers under the training table's classifier layout (hopper's
    -- preprocess_validation takes a numeric array as wide as the classes so), with its classes once
    -- packed. The training summary is only read (its columns' types checked first); a missing one is
    -- left to hopper's message.
    training_summary := to_regclass(madlib.__hopper_quote_name(training_preprocessor_table, '_summary'));
    IF madlib.__hopper_one_hot_type(source_table, dependent_varname) IS NOT NULL AND training_summary IS NOT NULL
       AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = training_summary AND attname = 'response_type'
                     AND atttypid = 'text'::regtype AND NOT attisdropped) THEN
        PERFORM madlib.__hopper_require_builtin_columns(training_summary,
                    ARRAY['response_type', 'class_values', 'dependent_dim'], 'summary table');
        EXECUTE format('SELECT response_type = ''classification'' AND class_values = ARRAY(SELECT i::text
                               FROM generate_series(0, dependent_dim - 1) i) FROM %s', training_summary) INTO one_hot;
    END IF;
    one_hot := COALESCE(one_hot, false);
    IF one_hot THEN
        read_table := madlib.__hopper_one_hot_source(read_table, source_table, dependent_varname);
    END IF;
    PERFORM hopper.preprocess_validation(read_table, output_table, dependent_varname, independent_varname,
                                         training_preprocessor_table, buffer_size => buffer_size,
                                         buffer_fill => 'full');
    IF one_hot THEN
        PERFORM madlib.__hopper_one_hot_done(output_table, source_table, dependent_varname, NULL);
    END IF;
    PERFORM madlib.__hopper_null_class_done(output_table, source_table, dependent_varname, read_table);
    PERFORM madlib.__hopper_flat_source_done(source_table, read_table);
    PERFORM madlib.__hopper_madlib_packed(output_table, source_table, dependent_varname, independent_varname,
                                          source_given, output_given);
    PERFORM madlib.__hopper_one_hot_madlib(madlib.__hopper_quote_name(output_table, '_summary')::regclass,
                                           CASE WHEN one_hot THEN madlib.__hopper_column_type(source_table, dependent_varname) END);
END $$;

CREATE FUNCTION madlib.validation_preprocessor_dl(source_table varchar, output_table varchar, dependent_varname varchar,
                                                  independent_varname varchar, training_preprocessor_table varchar,
                                                  buffer_size integer DEFAULT NULL, distribution_rules text DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_validation_preprocessor_dl(madlib.__hopper_input_name(source_table),
               madlib.__hopper_output_name(output_table), dependent_varname, independent_varname,
               madlib.__hopper_input_name(training_preprocessor_table), buffer_size, distribution_rules,
               source_table, output_table);
END;

-- MADlib's conversions between arrays and the bytes of its packed columns (float32 and int16,
-- little-endian): hopper's own functions.
CREATE FUNCTION madlib.convert_array_to_bytea(var real[]) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN hopper.float32_bytes(var);

CREATE FUNCTION madlib.convert_array_to_bytea(var smallint[]) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN hopper.int16_bytes(var);

CREATE FUNCTION madlib.convert_bytea_to_real_array(var bytea) RETURNS real[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN hopper.float32_array(var);

CREATE FUNCTION madlib.convert_bytea_to_smallint_array(var bytea) RETURNS smallint[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN hopper.int16_array(var);

-- ---- architectures and model selection tables -------------------------------------------------
-- (load_keras_model and generate_model_configs add to a table the caller's search_path finds, or
-- create it where CREATE TABLE would.)
CREATE FUNCTION madlib.__hopper_load_keras_model(keras_model_arch_table text, model_arch json, model_weights bytea,
                                                 name text, description text, model_id integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    stand_in jsonb;
    created boolean;
    id integer;
    t regclass;
    readable boolean;
    stored_weights bytea;
BEGIN
    PERFORM madlib.__hopper_required_table(keras_model_arch_table, 'keras_model_arch_table', 'output');
    PERFORM madlib.__hopper_required(model_arch IS NOT NULL, 'model_arch');
    IF model_id IS NOT NULL THEN
        PERFORM madlib.__hopper_unsupported('model_id', 'hopper numbers architectures itself.', 'Leave out model_id.');
    END IF;
    created := to_regclass(keras_model_arch_table) IS NULL;
    BEGIN
        id := hopper.load_model_arch(keras_model_arch_table, model_arch::jsonb, name, description, model_weights);
    EXCEPTION WHEN invalid_parameter_value OR feature_not_supported THEN
        -- MADlib stores any JSON and has Keras read it when a model is trained with it; hopper reads it
        -- now. An architecture hopper cannot train (a layer it lacks, a functional model) is stored as
        -- given, with its weights as given (there is nothing to check them against), and refused when a
        -- fit names it. Weights that do not fit an architecture hopper reads: that error stands.
        -- hopper.load_model_arch makes the row (and the table) with a stand-in, which the given JSON
        -- and weights then replace: the table stays of hopper's making.
        IF model_weights IS NOT NULL THEN
            -- Whether hopper reads the architecture: loaded without weights into a temporary table, then
            -- undone (HP001), so that nothing of the probe stays (not even a model_id of the table's).
            BEGIN
                -- (Its NOTICE of a table created would name the probe; the setting is undone with it.)
                PERFORM set_config('client_min_messages', 'warning', true);
                PERFORM hopper.load_model_arch('pg_temp.__hopper_arch_probe', model_arch::jsonb, NULL, NULL, NULL);
                RAISE SQLSTATE 'HP001';
            EXCEPTION
                WHEN SQLSTATE 'HP001' THEN
                    readable := true;
                WHEN invalid_parameter_value OR feature_not_supported THEN
                    readable := false;
            END;
            IF readable THEN
                RAISE;
            END IF;
        END IF;
        stand_in := jsonb_build_object('class_name', 'Sequential', 'config', jsonb_build_array(jsonb_build_object(
                        'class_name', 'Dense', 'config', jsonb_build_object('units', 1, 'batch_input_shape', '[null, 1]'::jsonb,
                        'name', 'hopper_madlib stand-in'))));
        id := hopper.load_model_arch(keras_model_arch_table, stand_in, name, description, NULL);
        stored_weights := model_weights;
    END;
    t := madlib.__hopper_quote_name(keras_model_arch_table)::regclass;
    -- MADlib's model_arch column is json: the architecture as given, text for text (hopper reads either).
    IF created THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN model_arch TYPE json USING model_arch::json', t);
    END IF;
    EXECUTE format('UPDATE %s SET model_arch = $1 WHERE model_id = $2', t) USING model_arch, id;
    IF stored_weights IS NOT NULL THEN
        EXECUTE format('UPDATE %s SET model_weights = $1 WHERE model_id = $2', t) USING stored_weights, id;
    END IF;
END $$;

-- The architecture table may exist (a row is added: the one the caller's search_path finds) or not
-- (it is created where CREATE TABLE would put it).
CREATE FUNCTION madlib.load_keras_model(keras_model_arch_table varchar, model_arch json, model_weights bytea DEFAULT NULL,
                                        name text DEFAULT NULL, description text DEFAULT NULL, model_id integer DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_load_keras_model(
               CASE WHEN pg_catalog.btrim(keras_model_arch_table) OPERATOR(pg_catalog.<>) ''
                         AND pg_catalog.to_regclass(keras_model_arch_table) IS NOT NULL
                    THEN madlib.__hopper_input_name(keras_model_arch_table)
                    ELSE madlib.__hopper_output_name(keras_model_arch_table) END,
               model_arch, model_weights, name, description, model_id);
END;

CREATE FUNCTION madlib.__hopper_delete_keras_model(keras_model_arch_table text, model_id integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM madlib.__hopper_required_table(keras_model_arch_table, 'keras_model_arch_table', 'input');
    PERFORM madlib.__hopper_required(model_id IS NOT NULL, 'model_id');
    PERFORM hopper.delete_model_arch(keras_model_arch_table, model_id);
    -- MADlib drops the table with its last architecture; hopper_madlib drops one hopper made, never a
    -- table of the user's.
    PERFORM madlib.__hopper_drop_if_emptied(madlib.__hopper_quote_name(keras_model_arch_table)::regclass,
        'model_arch', 'Keras Model Arch: Dropping empty keras model architecture table %s');
END $$;

CREATE FUNCTION madlib.delete_keras_model(keras_model_arch_table varchar, model_id integer)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_delete_keras_model(madlib.__hopper_input_name(keras_model_arch_table), model_id);
END;

-- ---- custom functions (object_table) ----------------------------------------------------------
-- MADlib keeps Keras custom losses and metrics in a table of schema madlib (id serial, name text
-- PRIMARY KEY, description text, object bytea: a dill-pickled Python function), named by
-- object_table without a schema. hopper runs no Python: load_custom_function stores an object as
-- given, and a model whose compile_params name it is refused (0A000, naming it). The top-k accuracy
-- load_top_k_accuracy_function adds is one of hopper's own metrics (top_k_accuracy with top_k): its
-- row holds hopper's description of that metric where MADlib's holds a pickle, and compile_params
-- naming it (metrics=['top_3_accuracy']) train with hopper's metric.
-- The object table as MADlib names it: madlib."<name>" (a name with a schema is refused, as by MADlib).
CREATE FUNCTION madlib.__hopper_object_table(object_table text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    parts text[];
BEGIN
    PERFORM madlib.__hopper_required_table(object_table, 'object_table', 'object');
    BEGIN
        parts := parse_ident(object_table);
    EXCEPTION WHEN invalid_parameter_value THEN
        RAISE EXCEPTION 'invalid object_table name %', object_table USING ERRCODE = 'invalid_name';
    END;
    IF cardinality(parts) <> 1 THEN
        RAISE EXCEPTION 'object_table % names a schema', object_table USING ERRCODE = 'invalid_name',
            DETAIL = 'MADlib keeps custom functions in a table of schema madlib.',
            HINT = 'Do not include schema name for the object table.';
    END IF;
    RETURN format('madlib.%I', parts[1]);
END $$;

-- An object table that is there, with MADlib's columns.
CREATE FUNCTION madlib.__hopper_object_table_valid(object_table text) RETURNS regclass
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t regclass := to_regclass(object_table);
    missing text[];
BEGIN
    IF t IS NULL THEN
        RAISE EXCEPTION 'object table ''%'' does not exist', object_table USING ERRCODE = 'undefined_table',
            HINT = 'Load functions into it with madlib.load_custom_function or madlib.load_top_k_accuracy_function.';
    END IF;
    missing := ARRAY(SELECT c FROM unnest(ARRAY['id', 'name', 'description', 'object']) c
                     WHERE NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t AND a.attname = c
                                       AND a.attnum > 0 AND NOT a.attisdropped));
    IF cardinality(missing) > 0 THEN
        RAISE EXCEPTION 'invalid custom function table %, missing columns: %', t, array_to_string(missing, ', ')
            USING ERRCODE = 'undefined_column';
    END IF;
    RETURN t;
END $$;

-- A table that exists is written only by its owner: another role's table would run that role's
-- triggers, rules and column defaults as the caller (a superuser included: hostile review). `what`
-- names the table and `writes` what writes it, for the message.
CREATE FUNCTION madlib.__hopper_own_table(t regclass, what text, writes text) RETURNS regclass
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    owner name := (SELECT pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.oid = t);
BEGIN
    IF owner IS DISTINCT FROM current_user THEN
        RAISE EXCEPTION '% % belongs to role %', what, t, owner
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('%s writes only a table the caller owns: another role''s triggers, rules and '
                                  'defaults would run as the caller.', writes),
                  HINT = 'Use a table name of your own: one that does not exist yet is created for you.';
    END IF;
    RETURN t;
END $$;

-- What hopper stores for a top-k accuracy metric in place of MADlib's pickle of a Keras function.
CREATE FUNCTION madlib.__hopper_top_k_object(k integer) RETURNS bytea
LANGUAGE sql IMMUTABLE
BEGIN ATOMIC
    SELECT pg_catalog.convert_to(pg_catalog.format('hopper metric top_k_accuracy, top_k=%s', k), 'UTF8');
END;

-- A row of the object table (created, with hopper's mark, when it is not there).
CREATE FUNCTION madlib.__hopper_add_custom_function(object_table text, object bytea, name text, description text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t text := madlib.__hopper_object_table(object_table);
    token uuid;
BEGIN
    IF to_regclass(t) IS NULL THEN
        EXECUTE format('CREATE TABLE %s (id serial, name text, description text, object bytea, PRIMARY KEY (name))', t);
        EXECUTE format('GRANT SELECT ON %s TO PUBLIC', t);
        -- hopper's mark (hopper.output_tables): delete_custom_function drops only a table it made.
        token := pg_catalog.gen_random_uuid();
        EXECUTE format('COMMENT ON TABLE %s IS %L', t, 'MADlib custom function table [hopper:' || token || ']');
        INSERT INTO hopper.output_tables (token, kind, schema_name, table_name)
        SELECT token, 'custom_functions', n.nspname, c.relname
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = t::regclass;
        RAISE NOTICE 'Keras Custom Function: Created new custom function table %.', t;
    END IF;
    BEGIN
        EXECUTE format('INSERT INTO %s (name, description, object) VALUES ($1, $2, $3)',
                       madlib.__hopper_own_table(madlib.__hopper_object_table_valid(t), 'custom function table',
                                                  'Loading a custom function'))
            USING name, description, object;
    EXCEPTION WHEN unique_violation THEN
        RAISE EXCEPTION 'Function ''%'' already exists in %', name, t USING ERRCODE = 'unique_violation';
    END;
    RAISE NOTICE 'Keras Custom Function: Added function % to % table', name, t;
END $$;

-- MADlib unpickles the object with dill and refuses one that does not load. hopper runs no Python: it
-- refuses what is not a pickle of protocol 2 to 5 (dill's under Python 2 and 3: the PROTO opcode
-- 0x80 and its version first, the STOP opcode '.' last), as MADlib's tests expect of 'invalid_obj'.
CREATE FUNCTION madlib.__hopper_load_custom_function(object_table text, object bytea, name text, description text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM madlib.__hopper_required(object IS NOT NULL, 'object');
    PERFORM madlib.__hopper_required(name IS NOT NULL, 'name');
    IF length(object) < 3 OR get_byte(object, 0) <> 128 OR get_byte(object, 1) NOT BETWEEN 2 AND 5
       OR get_byte(object, length(object) - 1) <> 46 THEN
        RAISE EXCEPTION 'Keras Custom Function: Invalid function object'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The object is not a Python pickle of protocol 2 to 5 (dill.dumps writes one).',
                  HINT = 'Pass the bytes of dill.dumps(function), as MADlib''s load_custom_function takes them.';
    END IF;
    PERFORM madlib.__hopper_add_custom_function(object_table, object, name, description);
END $$;

CREATE FUNCTION madlib.load_custom_function(object_table varchar, object bytea, name text, description text DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_load_custom_function(object_table, object, name, description);
END;

CREATE FUNCTION madlib.__hopper_load_top_k_accuracy_function(object_table text, k integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM madlib.__hopper_required(k IS NOT NULL, 'k');
    IF k <= 0 THEN
        RAISE EXCEPTION 'Keras Custom Function: For top k accuracy functions k has to be a positive integer.'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM madlib.__hopper_add_custom_function(object_table, madlib.__hopper_top_k_object(k),
                                                 format('top_%s_accuracy', k), format('returns top_%s_accuracy', k));
END $$;

CREATE FUNCTION madlib.load_top_k_accuracy_function(object_table varchar, k integer)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_load_top_k_accuracy_function(object_table, k);
END;

-- By id or by name; the table is dropped with its last function, as MADlib drops it -- when hopper
-- made it (its mark), never a table of the user's that has the same columns.
CREATE FUNCTION madlib.__hopper_delete_custom_function(object_table text, id integer, name text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t regclass := madlib.__hopper_own_table(
        madlib.__hopper_object_table_valid(madlib.__hopper_object_table(object_table)), 'custom function table',
        'Deleting a custom function');
    deleted bigint;
BEGIN
    PERFORM madlib.__hopper_required(id IS NOT NULL OR name IS NOT NULL, 'id/name');
    IF id IS NOT NULL THEN
        EXECUTE format('DELETE FROM %s WHERE id = $1', t) USING id;
    ELSE
        EXECUTE format('DELETE FROM %s WHERE name = $1', t) USING name;
    END IF;
    GET DIAGNOSTICS deleted = ROW_COUNT;
    IF deleted = 0 THEN
        RAISE EXCEPTION 'Keras Custom Function: Object % not found', COALESCE(id::text, quote_literal(name))
            USING ERRCODE = 'undefined_object';
    END IF;
    RAISE NOTICE 'Keras Custom Function: Object % has been deleted from %.', COALESCE(id::text, quote_literal(name)), t;
    PERFORM madlib.__hopper_drop_if_emptied(t, 'custom_functions',
        'Keras Custom Function: Dropping empty custom keras function table %s');
END $$;

CREATE FUNCTION madlib.delete_custom_function(object_table varchar, id integer)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_delete_custom_function(object_table, id, NULL);
END;

CREATE FUNCTION madlib.delete_custom_function(object_table varchar, name text)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_delete_custom_function(object_table, NULL, name);
END;

-- The functions of object_table that names (a loss, metrics) use, as hopper computes them: a top-k
-- accuracy row becomes (top_k_accuracy, k); any other object is Python, refused naming it. A name the
-- table does not have is left to hopper's own check (a built-in loss or metric). Returns the
-- (name, k) pairs of the top-k rows used; NULL object_table: none.
CREATE FUNCTION madlib.__hopper_custom_functions(object_table text, names text[], loss text,
                                                 OUT name text, OUT k integer)
RETURNS SETOF record LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t regclass;
    n text;
    obj bytea;
    rows bigint;
BEGIN
    IF object_table IS NULL THEN
        RETURN;
    END IF;
    t := madlib.__hopper_object_table_valid(madlib.__hopper_object_table(object_table));
    PERFORM madlib.__hopper_require_builtin_columns(t, NULL, 'custom function table');
    FOR n IN SELECT DISTINCT u FROM unnest(names || loss) u WHERE u IS NOT NULL LOOP
        EXECUTE format('SELECT object FROM %s WHERE name = $1', t) INTO obj USING n;
        GET DIAGNOSTICS rows = ROW_COUNT;
        CONTINUE WHEN rows = 0;
        k := (regexp_match(n, '^top_([0-9]+)_accuracy$'))[1]::int;
        IF n IS DISTINCT FROM loss AND k IS NOT NULL AND obj = madlib.__hopper_top_k_object(k) THEN
            name := n;
            RETURN NEXT;
        ELSE
            PERFORM madlib.__hopper_unsupported(format('custom function %s of object table %s', quote_literal(n), t),
                'It is a Python object (Keras code pickled by dill); hopper runs no Python. Of MADlib''s custom '
                'functions hopper computes the top-k accuracy of load_top_k_accuracy_function.',
                'Use a built-in loss or metric, or madlib.load_top_k_accuracy_function''s top_<k>_accuracy.');
        END IF;
    END LOOP;
END $$;

-- The top_k of hopper's metric for the top-k rows used (one k per model: hopper computes one).
CREATE FUNCTION madlib.__hopper_custom_top_k(used text[], ks integer[]) RETURNS integer
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF (SELECT count(DISTINCT u) FROM unnest(ks) u) > 1 THEN
        PERFORM madlib.__hopper_unsupported(format('top-k accuracy for several k (%s)', array_to_string(used, ', ')),
            'hopper computes one top_k_accuracy per model.', 'Name one top_<k>_accuracy per configuration.');
    END IF;
    RETURN ks[1];
END $$;

-- compile_params (MADlib's Keras string) with the object table's top-k metrics as hopper's.
CREATE FUNCTION madlib.__hopper_custom_compile(compile_params text, object_table text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    used text[];
    ks integer[];
    u text;
BEGIN
    SELECT array_agg(c.name), array_agg(c.k) INTO used, ks
    FROM madlib.__hopper_compile_names(compile_params) n,
         madlib.__hopper_custom_functions(object_table, n.metrics, n.loss) c;
    IF used IS NULL THEN
        RETURN compile_params;
    END IF;
    FOREACH u IN ARRAY used LOOP
        compile_params := regexp_replace(compile_params, '([''"])' || u || '\1', '''top_k_accuracy''', 'g');
    END LOOP;
    RETURN compile_params || format(', top_k=%s', madlib.__hopper_custom_top_k(used, ks));
END $$;

-- A compile_params grid (as JSON) with the object table's top-k metrics as hopper's.
CREATE FUNCTION madlib.__hopper_custom_space(space jsonb, object_table text) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    used text[];
    ks integer[];
    u text;
    out text := space::text;
BEGIN
    -- A custom loss is refused whatever its object (hopper's losses are its own).
    PERFORM madlib.__hopper_custom_functions(object_table, NULL, l #>> '{}')
    FROM jsonb_path_query(space, 'lax $.loss.** ? (@.type() == "string")') l;
    SELECT array_agg(c.name), array_agg(c.k) INTO used, ks
    FROM madlib.__hopper_custom_functions(object_table,
             ARRAY(SELECT v #>> '{}' FROM jsonb_path_query(space, 'lax $.metrics.** ? (@.type() == "string")') v),
             NULL) c;
    IF used IS NULL THEN
        RETURN space;
    END IF;
    FOREACH u IN ARRAY used LOOP
        out := replace(out, format('"%s"', u), '"top_k_accuracy"');
    END LOOP;
    RETURN out::jsonb || jsonb_build_object('top_k', jsonb_build_array(madlib.__hopper_custom_top_k(used, ks)));
END $$;

-- MADlib's model selection summary has object_table too.
-- MADlib's model selection summary: object_table, and model_arch_table as the caller wrote it
-- (arch_given; MADlib's fit_multiple_model finds it through the caller's search_path). hopper's
-- functions read the table it resolved then, kept in hopper_model_arch_table.
CREATE FUNCTION madlib.__hopper_mst_summary(model_selection_table text, object_table text, arch_given text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    summary regclass := madlib.__hopper_quote_name(model_selection_table, '_summary')::regclass;
BEGIN
    EXECUTE format('ALTER TABLE %s ADD COLUMN IF NOT EXISTS object_table text', summary);
    EXECUTE format('UPDATE %s SET object_table = $1', summary) USING object_table;
    IF arch_given IS NOT NULL THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN IF NOT EXISTS hopper_model_arch_table text', summary);
        EXECUTE format('UPDATE %s SET hopper_model_arch_table = model_arch_table, model_arch_table = $1', summary)
            USING arch_given;
    END IF;
END $$;

-- MADlib drops repeated parameters from the lists of load_model_selection_table (the same once
-- parsed: spaces, the order of keys); hopper refuses them. The first of each stays, in order; one
-- hopper cannot parse is kept for hopper's own error, which names its element.
CREATE FUNCTION madlib.__hopper_distinct_params(list text[], compile boolean) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    seen text[] := '{}';
    kept text[] := '{}';
    p text;
    k text;
BEGIN
    IF list IS NULL THEN
        RETURN NULL;
    END IF;
    FOREACH p IN ARRAY list LOOP
        BEGIN
            k := CASE WHEN compile THEN hopper.canonical_compile_params(p)::text ELSE hopper.canonical_fit_params(p)::text END;
        EXCEPTION WHEN invalid_parameter_value OR syntax_error OR feature_not_supported OR invalid_text_representation
                       OR data_exception THEN
            k := NULL;
        END;
        IF k IS NULL OR NOT k = ANY (seen) THEN
            kept := kept || p;
            seen := seen || k;
        END IF;
    END LOOP;
    RETURN kept;
END $$;

CREATE FUNCTION madlib.__hopper_load_model_selection_table(model_arch_table text, model_selection_table text,
                                                           model_id_list integer[], compile_params_list text[],
                                                           fit_params_list text[], object_table text, arch_given text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM madlib.__hopper_required_table(model_arch_table, 'model_arch_table', 'input');
    PERFORM madlib.__hopper_required_table(model_selection_table, 'model_selection_table', 'output');
    PERFORM madlib.__hopper_required(model_id_list IS NOT NULL, 'model_id_list');
    PERFORM madlib.__hopper_required(compile_params_list IS NOT NULL, 'compile_params_list');
    PERFORM madlib.__hopper_required(fit_params_list IS NOT NULL, 'fit_params_list');
    PERFORM hopper.load_model_selection_table(model_arch_table, model_selection_table, model_id_list,
                                              madlib.__hopper_distinct_params(ARRAY(
                                                  SELECT madlib.__hopper_custom_compile(madlib.__hopper_compile_params(c), object_table)
                                                  FROM unnest(compile_params_list) WITH ORDINALITY AS u(c, i) ORDER BY i), true),
                                              madlib.__hopper_distinct_params(ARRAY(
                                                  SELECT madlib.__hopper_fit_params(f)
                                                  FROM unnest(fit_params_list) WITH ORDINALITY AS u(f, i) ORDER BY i), false));
    PERFORM madlib.__hopper_mst_summary(model_selection_table, object_table, arch_given);
END $$;

CREATE FUNCTION madlib.load_model_selection_table(model_arch_table varchar, model_selection_table varchar,
                                                  model_id_list integer[], compile_params_list varchar[],
                                                  fit_params_list varchar[], object_table varchar DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_load_model_selection_table(madlib.__hopper_input_name(model_arch_table),
               madlib.__hopper_output_name(model_selection_table), model_id_list, compile_params_list,
               fit_params_list, object_table, model_arch_table);
END;

CREATE FUNCTION madlib.__hopper_generate_model_configs(model_arch_table text, model_selection_table text,
                                                       model_id_list integer[], compile_params_grid text, fit_params_grid text,
                                                       search_type text, num_configs integer, random_state integer,
                                                       object_table text, arch_given text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    existing regclass;
    staging text;
    level text;
    added bigint;
    drawn bigint;
BEGIN
    PERFORM madlib.__hopper_required_table(model_arch_table, 'model_arch_table', 'input');
    PERFORM madlib.__hopper_required_table(model_selection_table, 'model_selection_table', 'output');
    PERFORM madlib.__hopper_required(model_id_list IS NOT NULL, 'model_id_list');
    PERFORM madlib.__hopper_required(compile_params_grid IS NOT NULL, 'compile_params_grid');
    existing := to_regclass(model_selection_table);
    IF existing IS NOT NULL THEN
        PERFORM madlib.__hopper_own_table(existing, 'model selection table', 'generate_model_configs');
    END IF;
    -- MADlib appends to an existing model selection table, mst_key going on where it stopped (its
    -- summary stays): hopper generates into a table of its own, whose rows move over.
    staging := CASE WHEN existing IS NULL THEN model_selection_table
                    ELSE madlib.__hopper_quote_name(model_selection_table, '__hopper_appended') END;
    -- hopper's NOTICEs would name the staging table: quiet while it generates, said below of the
    -- caller's table (the function's own setting of client_min_messages, restored after).
    IF existing IS NOT NULL AND current_setting('client_min_messages') NOT IN ('warning', 'error') THEN
        level := current_setting('client_min_messages');
        PERFORM set_config('client_min_messages', 'warning', true);
    END IF;
    PERFORM hopper.generate_model_configs(model_arch_table, staging, model_id_list,
                                          madlib.__hopper_custom_space(madlib.__hopper_space(compile_params_grid, 'compile_params_grid',
                                                                lower(COALESCE(search_type, 'grid')) = 'grid'), object_table),
                                          madlib.__hopper_space(fit_params_grid, 'fit_params_grid',
                                                                lower(COALESCE(search_type, 'grid')) = 'grid'),
                                          COALESCE(search_type, 'grid'), num_configs, random_state);
    IF level IS NOT NULL THEN
        PERFORM set_config('client_min_messages', level, true);
    END IF;
    IF existing IS NULL THEN
        PERFORM madlib.__hopper_mst_summary(model_selection_table, object_table, arch_given);
    ELSE
        EXECUTE format('INSERT INTO %1$s (mst_key, model_id, compile_params, fit_params)
                        SELECT (SELECT COALESCE(max(mst_key), 0) FROM %1$s) + row_number() OVER (ORDER BY n.mst_key),
                               n.model_id, n.compile_params, n.fit_params FROM %2$s n ORDER BY n.mst_key',
                       existing, madlib.__hopper_quote_name(staging)::regclass);
        GET DIAGNOSTICS added = ROW_COUNT;
        IF random_state IS NULL AND lower(COALESCE(search_type, 'grid')) = 'random' THEN
            EXECUTE format('SELECT random_state FROM %s', madlib.__hopper_quote_name(staging, '_summary')::regclass)
                INTO drawn;
            RAISE NOTICE 'random search with random_state %', drawn
                USING HINT = format('Pass random_state => %s to draw the same configurations again.', drawn);
        END IF;
        RAISE NOTICE 'appended % model configurations to %', added, existing;
        -- A summary dropped since is made again, as MADlib makes it (the new configurations').
        IF to_regclass(madlib.__hopper_quote_name(model_selection_table, '_summary')) IS NULL THEN
            EXECUTE format('CREATE TABLE %s AS SELECT * FROM %s', madlib.__hopper_quote_name(model_selection_table, '_summary'),
                           madlib.__hopper_quote_name(staging, '_summary')::regclass);
            PERFORM madlib.__hopper_mst_summary(model_selection_table, object_table, arch_given);
        END IF;
        EXECUTE format('DROP TABLE %s, %s', madlib.__hopper_quote_name(staging)::regclass,
                       madlib.__hopper_quote_name(staging, '_summary')::regclass);
    END IF;
END $$;

CREATE FUNCTION madlib.generate_model_configs(model_arch_table varchar, model_selection_table varchar,
                                              model_id_list integer[], compile_params_grid varchar, fit_params_grid varchar,
                                              search_type varchar DEFAULT 'grid', num_configs integer DEFAULT NULL,
                                              random_state integer DEFAULT NULL, object_table varchar DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_generate_model_configs(madlib.__hopper_input_name(model_arch_table),
               CASE WHEN pg_catalog.btrim(model_selection_table) OPERATOR(pg_catalog.<>) ''
                         AND pg_catalog.to_regclass(model_selection_table) IS NOT NULL
                    THEN madlib.__hopper_input_name(model_selection_table)
                    ELSE madlib.__hopper_output_name(model_selection_table) END,
               model_id_list, compile_params_grid, fit_params_grid,
               search_type, num_configs, random_state, object_table, model_arch_table);
END;

-- ---- training ---------------------------------------------------------------------------------
-- hopper.fit claims model and its _summary and _info before it trains (42P07 if one exists); the
-- MADlib columns are added afterwards to the tables it made, named through __hopper_quote_name.
-- model_name: the output's name as the caller wrote it, for MADlib's summary column model.
-- MADlib's training loss and metrics are those of the weights at the end of each evaluated
-- iteration (a pass over the training data), so hopper_madlib's training functions run with
-- hopper.training_metrics = exact (hopper's default is the running mean over the iteration's
-- minibatches): a warm start of frozen layers reports the loss the run before ended with, as MADlib's.
CREATE FUNCTION madlib.__hopper_keras_fit(source_table text, model text, model_arch_table text, model_id integer,
                                          compile_params text, fit_params text, num_iterations integer,
                                          use_gpus boolean, validation_table text, metrics_compute_frequency integer,
                                          warm_start boolean, name text, description text, object_table text,
                                          model_name text, source_given text, arch_given text, validation_given text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp SET hopper.training_metrics = exact AS $$
DECLARE
    arch jsonb;
    weights bytea;
    start uuid;
    summary regclass;
    log_dir text := madlib.__hopper_tensorboard_log_dir(fit_params);
    read_source text;
    read_validation text;
BEGIN
    PERFORM madlib.__hopper_required_table(source_table, 'source_table', 'input');
    PERFORM madlib.__hopper_required_table(model, 'model', 'output');
    PERFORM madlib.__hopper_required_table(model_arch_table, 'model_arch_table', 'input');
    PERFORM madlib.__hopper_required(model_id IS NOT NULL, 'model_id');
    PERFORM madlib.__hopper_required(compile_params IS NOT NULL, 'compile_params');
    PERFORM madlib.__hopper_required(num_iterations IS NOT NULL, 'num_iterations');
    PERFORM madlib.__hopper_no_gpus(use_gpus);
    PERFORM madlib.__hopper_input_exists(validation_table, 'validation_table');
    PERFORM madlib.__hopper_require_builtin_columns(madlib.__hopper_quote_name(model_arch_table)::regclass, NULL,
                                                    'model architecture table');
    EXECUTE format('SELECT model_arch::jsonb, model_weights FROM %s WHERE model_id = $1',
                   madlib.__hopper_quote_name(model_arch_table)::regclass)
        INTO arch, weights USING model_id;
    IF arch IS NULL THEN
        RAISE EXCEPTION 'model_id % does not exist in model architecture table %', model_id, model_arch_table
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Transfer learning: the architecture row's weights (a hopper model state) become a checkpoint the
    -- run starts from. MADlib's warm start reads the weights of model; hopper's reads model_weights too.
    -- (MADlib's NULL for an optional argument means its default.)
    IF weights IS NOT NULL AND NOT COALESCE(warm_start, false) THEN
        start := hopper.create_checkpoint(weights, metadata => jsonb_build_object(
                     'source', 'madlib.madlib_keras_fit transfer learning', 'model_arch_table', model_arch_table, 'model_id', model_id));
    END IF;
    PERFORM madlib.__hopper_single_output(source_table);
    read_source := madlib.__hopper_repacked(source_table);
    read_validation := madlib.__hopper_repacked(validation_table);
    CALL hopper.fit(read_source, model, arch,
                    madlib.__hopper_custom_compile(madlib.__hopper_compile_params(compile_params), object_table),
                    COALESCE(madlib.__hopper_fit_params(madlib.__hopper_without_callbacks(fit_params)), ''), num_iterations,
                    read_validation, COALESCE(metrics_compute_frequency, num_iterations), COALESCE(warm_start, false),
                    name, description,
                    warm_start_checkpoint => start);
    PERFORM madlib.__hopper_repacked_done(source_table, read_source);
    PERFORM madlib.__hopper_repacked_done(validation_table, read_validation);
    PERFORM madlib.__hopper_madlib_shape(model);
    summary := madlib.__hopper_quote_name(model, '_summary')::regclass;
    -- MADlib's summary columns beside hopper's; hopper's training_metrics (where the training metrics
    -- came from) makes room for MADlib's array of them.
    EXECUTE format('ALTER TABLE %s RENAME COLUMN training_metrics TO training_metrics_source', summary);
    EXECUTE format('ALTER TABLE %1$s ADD COLUMN model text, ADD COLUMN model_id int4,
        ADD COLUMN compile_params text, ADD COLUMN fit_params text, ADD COLUMN object_table text,
        ADD COLUMN use_gpus bool, ADD COLUMN model_type text, ADD COLUMN model_size float8,
        ADD COLUMN metrics_elapsed_time float8[], ADD COLUMN madlib_version text,
        ADD COLUMN num_classes int4, ADD COLUMN metrics_type text[], ADD COLUMN loss_type text,
        ADD COLUMN training_metrics_final float8, ADD COLUMN training_loss_final float8,
        ADD COLUMN training_metrics float8[], ADD COLUMN training_loss float8[],
        ADD COLUMN validation_metrics_final float8, ADD COLUMN validation_loss_final float8,
        ADD COLUMN validation_metrics float8[], ADD COLUMN validation_loss float8[]', summary);
    -- As MADlib's: the tables as the caller named them, compile_params as written, model_type
    -- madlib_keras (hopper's CNN / MLP is in the _info it had: hopper.model_state_info says it too),
    -- no metrics (metrics_type, training_metrics, ...: NULL) for a model compiled without any.
    EXECUTE format('UPDATE %1$s s SET model = $1, model_id = $2, compile_params = $3,
        source_table = $6, model_arch_table = $7, validation_table = $8,
        fit_params = COALESCE($5, i.fit_params), object_table = $4, use_gpus = false, model_type = ''madlib_keras'', model_size = i.model_size,
        metrics_elapsed_time = i.metrics_elapsed_time, madlib_version = ''hopper '' || s.hopper_version,
        num_classes = cardinality(s.class_values),
        metrics_type = NULLIF(COALESCE(n.metrics, i.metrics_type), ''{}''),
        loss_type = COALESCE(n.loss, i.loss_type),
        training_metrics_final = CASE WHEN cardinality(i.metrics_type) > 0 THEN i.training_metrics_final END,
        training_loss_final = i.training_loss_final,
        training_metrics = CASE WHEN cardinality(i.metrics_type) > 0 THEN i.training_metrics END,
        training_loss = i.training_loss,
        validation_metrics_final = CASE WHEN cardinality(i.metrics_type) > 0 THEN i.validation_metrics_final END,
        validation_loss_final = i.validation_loss_final,
        validation_metrics = CASE WHEN cardinality(i.metrics_type) > 0 THEN i.validation_metrics END,
        validation_loss = i.validation_loss
        FROM %2$s i, madlib.__hopper_compile_names($3) n',
        summary, madlib.__hopper_quote_name(model, '_info')::regclass)
        USING model_name, model_id, compile_params, object_table, fit_params, source_given, arch_given, validation_given;
    PERFORM madlib.__hopper_class_values_column(summary);
    PERFORM madlib.__hopper_madlib_summary_types(summary);
    PERFORM madlib.__hopper_one_hot_madlib(summary, madlib.__hopper_one_hot_vartype(source_table));
    IF log_dir IS NOT NULL THEN
        PERFORM madlib.__hopper_tensorboard(log_dir, madlib.__hopper_quote_name(model, '_info')::regclass, summary,
                                            (SELECT (n.metrics)[1] FROM madlib.__hopper_compile_names(compile_params) n));
    END IF;
    -- MADlib's single-model fit makes model and model_summary only: scripts drop those two before
    -- fitting again, so hopper's _info (now in the summary) goes.
    EXECUTE format('DROP TABLE %s', madlib.__hopper_quote_name(model, '_info')::regclass);
END $$;

CREATE FUNCTION madlib.madlib_keras_fit(source_table varchar, model varchar, model_arch_table varchar, model_id integer,
                                        compile_params varchar, fit_params varchar, num_iterations integer,
                                        use_gpus boolean DEFAULT FALSE, validation_table varchar DEFAULT NULL,
                                        metrics_compute_frequency integer DEFAULT NULL, warm_start boolean DEFAULT FALSE,
                                        name varchar DEFAULT NULL, description varchar DEFAULT NULL,
                                        object_table varchar DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_keras_fit(madlib.__hopper_input_name(source_table), madlib.__hopper_output_name(model),
               madlib.__hopper_input_name(model_arch_table), model_id, compile_params, fit_params, num_iterations,
               use_gpus, madlib.__hopper_input_name(validation_table), metrics_compute_frequency, warm_start,
               name, description, object_table, model, source_table, model_arch_table, validation_table);
END;

-- MADlib's _info names each model's loss and metrics as its compile_params do (loss_type
-- categorical_crossentropy, metrics_type {top_3_accuracy}), as madlib_keras_fit's summary does;
-- hopper's _info names them canonically (softmax_cross_entropy, top_k_accuracy). The compile_params
-- of the selection table (MADlib's Keras string, or hopper's JSON of a drawn configuration, both as
-- written) say the names; a top_k_accuracy there is the object table's top_<k>_accuracy (the facade
-- wrote it so) when the configurations came with one.
CREATE FUNCTION madlib.__hopper_written_names(compile_params text, custom boolean, OUT metrics text[], OUT loss text)
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    j jsonb;
    top_k text;
BEGIN
    IF compile_params ~ '^\s*\{' THEN
        BEGIN
            j := compile_params::jsonb;
        EXCEPTION WHEN invalid_text_representation THEN
            RETURN;
        END;
        loss := CASE WHEN jsonb_typeof(j->'loss') = 'string' THEN j->>'loss' END;
        metrics := CASE jsonb_typeof(j->'metrics')
                       WHEN 'array' THEN ARRAY(SELECT jsonb_array_elements_text(j->'metrics'))
                       WHEN 'string' THEN ARRAY[j->>'metrics'] END;
        top_k := j->>'top_k';
    ELSE
        SELECT n.metrics, n.loss INTO metrics, loss FROM madlib.__hopper_compile_names(compile_params) n;
        top_k := substring(compile_params FROM '\mtop_k\s*=\s*([0-9]+)');
    END IF;
    IF custom AND top_k ~ '^[0-9]+$' THEN
        metrics := ARRAY(SELECT CASE WHEN m = 'top_k_accuracy' THEN format('top_%s_accuracy', top_k) ELSE m END
                         FROM unnest(metrics) WITH ORDINALITY AS u(m, k) ORDER BY k);
    END IF;
END $$;

CREATE FUNCTION madlib.__hopper_info_names(model_output_table text, object_table text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    info regclass := madlib.__hopper_quote_name(model_output_table, '_info')::regclass;
BEGIN
    PERFORM madlib.__hopper_require_builtin_columns(info, ARRAY['mst_key', 'compile_params', 'loss_type', 'metrics_type'],
                                                    'model info table');
    EXECUTE format('UPDATE %s i SET (loss_type, metrics_type) =
                        (SELECT COALESCE(n.loss, i.loss_type), COALESCE(NULLIF(n.metrics, ''{}''), i.metrics_type)
                         FROM madlib.__hopper_written_names(i.compile_params::text, $1) n)', info)
        USING object_table IS NOT NULL;
END $$;

-- The summary columns MADlib's fit_multiple_model and automl add to hopper's: model and model_info
-- (the output's name and its _info's as the caller wrote it: model_name), object_table, use_gpus,
-- madlib_version, num_classes and <dependent>_class_values.
CREATE FUNCTION madlib.__hopper_multi_summary(model_output_table text, model_name text, object_table text,
                                              source_table text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    summary regclass := madlib.__hopper_quote_name(model_output_table, '_summary')::regclass;
BEGIN
    EXECUTE format('ALTER TABLE %1$s ADD COLUMN model text, ADD COLUMN model_info text, ADD COLUMN object_table text,
        ADD COLUMN use_gpus bool, ADD COLUMN madlib_version text, ADD COLUMN num_classes int4', summary);
    EXECUTE format('UPDATE %1$s SET model = $1, model_info = $2, object_table = $3, use_gpus = false,
        madlib_version = ''hopper '' || hopper_version, num_classes = cardinality(class_values)', summary)
        USING model_name, madlib.__hopper_quote_name(model_name, '_info'), object_table;
    PERFORM madlib.__hopper_class_values_column(summary);
    PERFORM madlib.__hopper_madlib_summary_types(summary);
    PERFORM madlib.__hopper_one_hot_madlib(summary, madlib.__hopper_one_hot_vartype(source_table));
END $$;

CREATE FUNCTION madlib.__hopper_keras_fit_multiple_model(source_table text, model_output_table text,
                                                         model_selection_table text, num_iterations integer,
                                                         use_gpus boolean, validation_table text,
                                                         metrics_compute_frequency integer, warm_start boolean, name text,
                                                         description text, model_name text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp SET hopper.training_metrics = exact AS $$
DECLARE
    object_table text;
BEGIN
    PERFORM madlib.__hopper_required_table(source_table, 'source_table', 'input');
    PERFORM madlib.__hopper_required_table(model_output_table, 'model_output_table', 'output');
    PERFORM madlib.__hopper_required_table(model_selection_table, 'model_selection_table', 'input');
    PERFORM madlib.__hopper_required(num_iterations IS NOT NULL, 'num_iterations');
    -- use_caching: hopper keeps the packed buffers of a run in memory anyway (hopper.buffer_cache_mb).
    PERFORM madlib.__hopper_no_gpus(use_gpus);
    PERFORM madlib.__hopper_input_exists(validation_table, 'validation_table');
    PERFORM madlib.__hopper_single_output(source_table);
    CALL hopper.fit_multiple(source_table, model_output_table, model_selection_table, num_iterations, validation_table,
                             metrics_compute_frequency, COALESCE(warm_start, false), name, description);
    PERFORM madlib.__hopper_madlib_shape(model_output_table);
    -- The object table the configurations' top-k metrics came from (their compile_params are hopper's
    -- already), as the model selection table's summary names it.
    IF EXISTS (SELECT 1 FROM pg_attribute a
               WHERE a.attrelid = madlib.__hopper_quote_name(model_selection_table, '_summary')::regclass
                 AND a.attname = 'object_table' AND NOT a.attisdropped) THEN
        EXECUTE format('SELECT object_table FROM %s', madlib.__hopper_quote_name(model_selection_table, '_summary')::regclass)
            INTO object_table;
    END IF;
    PERFORM madlib.__hopper_multi_summary(model_output_table, model_name, object_table, source_table);
    PERFORM madlib.__hopper_info_names(model_output_table, object_table);
END $$;

CREATE FUNCTION madlib.madlib_keras_fit_multiple_model(source_table varchar, model_output_table varchar,
                                                       model_selection_table varchar, num_iterations integer,
                                                       use_gpus boolean DEFAULT FALSE, validation_table varchar DEFAULT NULL,
                                                       metrics_compute_frequency integer DEFAULT NULL,
                                                       warm_start boolean DEFAULT FALSE, name varchar DEFAULT NULL,
                                                       description varchar DEFAULT NULL, use_caching boolean DEFAULT FALSE)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_keras_fit_multiple_model(madlib.__hopper_input_name(source_table),
               madlib.__hopper_output_name(model_output_table), madlib.__hopper_input_name(model_selection_table),
               num_iterations, use_gpus, madlib.__hopper_input_name(validation_table), metrics_compute_frequency,
               warm_start, name, description, model_output_table);
END;

-- MADlib's automl_method 'hyperopt' ('num_configs=20, num_iterations=5, algorithm=tpe', its defaults):
-- num_configs configurations, each trained num_iterations iterations. Hyperopt's TPE draws its first
-- 20 trials (n_startup_jobs) at random from the space, and 'rand' draws every one so: hopper draws
-- them with random search (generate_model_configs) and trains them together by model hopping
-- (fit_multiple). TPE's model-guided trials beyond the 20th have no counterpart: refused (0A000).
CREATE FUNCTION madlib.__hopper_hyperopt(source_table text, model_output_table text, model_arch_table text,
                                         model_selection_table text, model_id_list integer[], compile_params_grid text,
                                         fit_params_grid text, automl_params text, random_state integer,
                                         validation_table text, metrics_compute_frequency integer, name text,
                                         description text, model_name text, object_table text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    p record;
    num_configs integer := 20;
    num_iterations integer := 5;
    algorithm text := 'tpe';
    summary regclass;
BEGIN
    FOR p IN SELECT lower(btrim(split_part(kv, '=', 1))) AS k, btrim(split_part(kv, '=', 2)) AS v
             FROM regexp_split_to_table(COALESCE(automl_params, ''), ',') kv
             WHERE btrim(kv) <> '' LOOP
        IF p.k = 'num_configs' THEN num_configs := p.v::integer;
        ELSIF p.k = 'num_iterations' THEN num_iterations := p.v::integer;
        ELSIF p.k = 'algorithm' THEN algorithm := lower(p.v);
        ELSE
            RAISE EXCEPTION 'unknown automl_params key "%"', p.k USING ERRCODE = 'invalid_parameter_value',
                HINT = 'Hyperopt takes num_configs, num_iterations and algorithm, e.g. ''num_configs=20, num_iterations=5, algorithm=tpe''.';
        END IF;
    END LOOP;
    IF algorithm NOT IN ('tpe', 'rand') THEN
        RAISE EXCEPTION 'unknown hyperopt algorithm "%"', algorithm USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Valid values are tpe and rand.';
    END IF;
    IF num_configs IS NULL OR num_configs < 1 OR num_iterations IS NULL OR num_iterations < 1 THEN
        RAISE EXCEPTION 'num_configs and num_iterations must be positive' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF algorithm = 'tpe' AND num_configs > 20 THEN
        PERFORM madlib.__hopper_unsupported(format('automl_method ''hyperopt'' with algorithm=tpe and num_configs=%s', num_configs),
                                            'Hyperopt''s TPE draws its first 20 configurations at random, as hopper does; it guides the later ones by a model of the results so far, which hopper does not.',
                                            'Use num_configs of 20 or fewer, algorithm=rand, or automl_method => ''hyperband''.');
    END IF;
    PERFORM madlib.__hopper_single_output(source_table);
    PERFORM hopper.generate_model_configs(model_arch_table, model_selection_table, model_id_list,
                                          madlib.__hopper_custom_space(madlib.__hopper_space(compile_params_grid, 'compile_params_grid'),
                                                                       object_table),
                                          madlib.__hopper_space(fit_params_grid, 'fit_params_grid'),
                                          'random', num_configs, random_state);
    PERFORM madlib.__hopper_mst_summary(model_selection_table, object_table, NULL);
    CALL hopper.fit_multiple(source_table, model_output_table, model_selection_table, num_iterations, validation_table,
                             metrics_compute_frequency, false, name, description);
    PERFORM madlib.__hopper_madlib_shape(model_output_table);
    PERFORM madlib.__hopper_multi_summary(model_output_table, model_name, object_table, source_table);
    PERFORM madlib.__hopper_info_names(model_output_table, object_table);
    summary := madlib.__hopper_quote_name(model_output_table, '_summary')::regclass;
    EXECUTE format('ALTER TABLE %s ADD COLUMN automl_method text, ADD COLUMN automl_params text, ADD COLUMN random_state int4',
                   summary);
    EXECUTE format('UPDATE %s SET automl_method = ''hyperopt'', automl_params = $1, random_state = $2', summary)
        USING format('num_configs=%s, num_iterations=%s, algorithm=%s', num_configs, num_iterations, algorithm), random_state;
END $$;

CREATE FUNCTION madlib.__hopper_keras_automl(source_table text, model_output_table text, model_arch_table text,
                                             model_selection_table text, model_id_list integer[],
                                             compile_params_grid text, fit_params_grid text,
                                             automl_method text, automl_params text,
                                             random_state integer, object_table text,
                                             use_gpus boolean, validation_table text,
                                             metrics_compute_frequency integer, name text,
                                             description text, model_name text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp SET hopper.training_metrics = exact AS $$
DECLARE
    info regclass;
    p record;
    r integer := 6;   -- MADlib's defaults: R = 6, eta = 3, skip_last = 0
    e integer := 3;
    skip integer := 0;
BEGIN
    PERFORM madlib.__hopper_required_table(source_table, 'source_table', 'input');
    PERFORM madlib.__hopper_required_table(model_output_table, 'model_output_table', 'output');
    PERFORM madlib.__hopper_required_table(model_arch_table, 'model_arch_table', 'input');
    PERFORM madlib.__hopper_required_table(model_selection_table, 'model_selection_table', 'output');
    PERFORM madlib.__hopper_required(model_id_list IS NOT NULL, 'model_id_list');
    PERFORM madlib.__hopper_required(compile_params_grid IS NOT NULL, 'compile_params_grid');
    PERFORM madlib.__hopper_no_gpus(use_gpus);
    PERFORM madlib.__hopper_input_exists(validation_table, 'validation_table');
    automl_method := COALESCE(automl_method, 'hyperband');
    IF lower(automl_method) = 'hyperopt' THEN
        PERFORM madlib.__hopper_hyperopt(source_table, model_output_table, model_arch_table, model_selection_table,
                                         model_id_list, compile_params_grid, fit_params_grid, automl_params, random_state,
                                         validation_table, metrics_compute_frequency, name, description, model_name,
                                         object_table);
        RETURN;
    END IF;
    FOR p IN SELECT lower(btrim(split_part(kv, '=', 1))) AS k, btrim(split_part(kv, '=', 2)) AS v
             FROM regexp_split_to_table(COALESCE(automl_params, ''), ',') kv
             WHERE btrim(kv) <> '' LOOP
        IF p.k = 'r' THEN r := p.v::integer;
        ELSIF p.k = 'eta' THEN e := p.v::integer;
        ELSIF p.k = 'skip_last' THEN skip := p.v::integer;
        ELSE
            RAISE EXCEPTION 'unknown automl_params key "%"', p.k USING ERRCODE = 'invalid_parameter_value',
                HINT = 'Hyperband takes R, eta and skip_last, e.g. ''R=6, eta=3, skip_last=0''.';
        END IF;
    END LOOP;
    PERFORM madlib.__hopper_single_output(source_table);
    CALL hopper.fit_automl(source_table, model_output_table, model_arch_table, model_selection_table, model_id_list,
                           madlib.__hopper_custom_space(madlib.__hopper_space(compile_params_grid, 'compile_params_grid'),
                                                        object_table),
                           madlib.__hopper_space(fit_params_grid, 'fit_params_grid'),
                           automl_method => automl_method, max_iterations => r, eta => e, skip_last => skip,
                           bracket_rule => 'madlib',
                           search_type => 'random', random_state => random_state, validation_table => validation_table,
                           metrics_compute_frequency => metrics_compute_frequency, name => name, description => description);
    PERFORM madlib.__hopper_madlib_shape(model_output_table);
    PERFORM madlib.__hopper_multi_summary(model_output_table, model_name, object_table, source_table);
    PERFORM madlib.__hopper_info_names(model_output_table, object_table);
    PERFORM madlib.__hopper_mst_summary(model_selection_table, object_table, NULL);
    EXECUTE format('ALTER TABLE %s ADD COLUMN automl_method text, ADD COLUMN automl_params text, ADD COLUMN random_state int4',
                   madlib.__hopper_quote_name(model_output_table, '_summary')::regclass);
    EXECUTE format('UPDATE %s SET automl_method = $1, automl_params = $2, random_state = $3',
                   madlib.__hopper_quote_name(model_output_table, '_summary')::regclass)
        USING automl_method, format('R=%s, eta=%s, skip_last=%s', r, e, skip), random_state;
    -- MADlib's info names each configuration's bracket s and the last round i it trained in.
    info := madlib.__hopper_quote_name(model_output_table, '_info')::regclass;
    EXECUTE format('ALTER TABLE %s ADD COLUMN s int4, ADD COLUMN i int4', info);
    -- The run is the one whose mark the table's comment carries (any role may add rows naming a table
    -- to hopper.output_tables for itself: a second row by name made this subquery fail).
    EXECUTE format('UPDATE %s f SET s = t.bracket, i = t.last_rung FROM hopper.search_trials t
                    WHERE t.mst_key = f.mst_key AND t.run_id = (SELECT o.run_id FROM hopper.output_tables o
                        WHERE o.kind = ''model_info'' AND o.token = pg_catalog.substring(
                            pg_catalog.obj_description($1, ''pg_class''), ''\[hopper:([0-9a-fA-F-]+)\]'')::uuid
                          AND o.schema_name = $2 AND o.table_name = $3)', info)
        USING info, (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = info),
              (SELECT c.relname FROM pg_class c WHERE c.oid = info);
END $$;

CREATE FUNCTION madlib.madlib_keras_automl(source_table varchar, model_output_table varchar, model_arch_table varchar,
                                           model_selection_table varchar, model_id_list integer[],
                                           compile_params_grid varchar, fit_params_grid varchar,
                                           automl_method varchar DEFAULT 'hyperband', automl_params varchar DEFAULT NULL,
                                           random_state integer DEFAULT NULL, object_table varchar DEFAULT NULL,
                                           use_gpus boolean DEFAULT FALSE, validation_table varchar DEFAULT NULL,
                                           metrics_compute_frequency integer DEFAULT NULL, name varchar DEFAULT NULL,
                                           description varchar DEFAULT NULL, use_caching boolean DEFAULT FALSE)
RETURNS void LANGUAGE sql
-- use_caching (2.x): accepted, as by fit_multiple_model (hopper keeps a run's buffers in memory anyway).
BEGIN ATOMIC
    SELECT madlib.__hopper_keras_automl(madlib.__hopper_input_name(source_table),
               madlib.__hopper_output_name(model_output_table), madlib.__hopper_input_name(model_arch_table),
               madlib.__hopper_output_name(model_selection_table), model_id_list, compile_params_grid, fit_params_grid,
               automl_method, automl_params, random_state, object_table, use_gpus,
               madlib.__hopper_input_name(validation_table), metrics_compute_frequency, name, description,
               model_output_table);
END;

-- ---- using models -----------------------------------------------------------------------------
CREATE FUNCTION madlib.__hopper_keras_evaluate(model_table text, test_table text, output_table text,
                                               use_gpus boolean, mst_key integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    info regclass;
    method text;
BEGIN
    PERFORM madlib.__hopper_required_table(model_table, 'model_table', 'input');
    PERFORM madlib.__hopper_required_table(test_table, 'test_table', 'input');
    PERFORM madlib.__hopper_required_table(output_table, 'output_table', 'output');
    PERFORM madlib.__hopper_no_gpus(use_gpus);
    -- MADlib's shape: loss, metric, metrics_type, loss_type (the first compile metric). CREATE TABLE
    -- AS claims the output's name before hopper.evaluate runs. loss_type: from the _info of several
    -- models (fit_multiple_model, automl), else from the summary of one (madlib_keras_fit).
    info := to_regclass(madlib.__hopper_quote_name(model_table, '_info'));
    PERFORM madlib.__hopper_require_builtin_columns(COALESCE(info, madlib.__hopper_quote_name(model_table, '_summary')::regclass),
                                                    NULL, 'model info table');
    -- As MADlib: mst_key picks one of several models (fit_multiple_model, automl) only, and a table of
    -- several models needs it (MADlib: "Multi-model needs to pass mst_key"; without it every model's
    -- rows were written, without their mst_key).
    IF mst_key IS NOT NULL AND info IS NULL THEN
        RAISE EXCEPTION 'mst_key % is given for %, a table of one model', mst_key, model_table
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Leave out mst_key: it picks one of the models of fit_multiple_model.';
    END IF;
    IF mst_key IS NULL AND info IS NOT NULL THEN
        -- hopper's summaries say which call made the table (hopper.fit writes an _info table too);
        -- MADlib's own have no method column, and only its fit_multiple_model and automl write _info.
        IF EXISTS (SELECT 1 FROM pg_attribute a
                   WHERE a.attrelid = madlib.__hopper_quote_name(model_table, '_summary')::regclass
                     AND a.attname = 'method' AND NOT a.attisdropped) THEN
            PERFORM madlib.__hopper_require_builtin_columns(madlib.__hopper_quote_name(model_table, '_summary')::regclass,
                                                            ARRAY['method'], 'model summary table');
            EXECUTE format('SELECT method FROM %s', madlib.__hopper_quote_name(model_table, '_summary')::regclass) INTO method;
        ELSE
            method := 'fit_multiple';
        END IF;
        IF method IN ('fit_multiple', 'fit_automl') THEN
            RAISE EXCEPTION 'mst_key is needed for %, a table of several models', model_table
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = 'MADlib refuses it too: "Multi-model needs to pass mst_key".',
                      HINT = 'Pass the mst_key of the model to evaluate (its _info table lists them).';
        END IF;
    END IF;
    -- A model table in MADlib's shape (model_weights) keeps its model_arch, as MADlib requires.
    IF EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = madlib.__hopper_quote_name(model_table)::regclass
               AND a.attname = 'model_weights' AND NOT a.attisdropped)
       AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = madlib.__hopper_quote_name(model_table)::regclass
                       AND a.attname = 'model_arch' AND NOT a.attisdropped) THEN
        RAISE EXCEPTION 'model table % has no model_arch column', model_table USING ERRCODE = 'undefined_column',
            DETAIL = 'MADlib''s model tables keep the architecture beside the weights.';
    END IF;
    EXECUTE format('CREATE TABLE %s AS
        SELECT e.loss, (SELECT v.value::float8 FROM jsonb_each_text(e.metrics) v LIMIT 1) AS metric,
               COALESCE((SELECT i.metrics_type[1:1] FROM %2$s i WHERE %3$s),
                        ARRAY(SELECT v.key FROM jsonb_each_text(e.metrics) v LIMIT 1)) AS metrics_type,
               (SELECT i.loss_type FROM %2$s i WHERE %3$s) AS loss_type
        FROM hopper.evaluate($1, $2, $3) e',
        madlib.__hopper_quote_name(output_table),
        COALESCE(info, madlib.__hopper_quote_name(model_table, '_summary')::regclass),
        CASE WHEN info IS NULL THEN 'true' ELSE 'i.mst_key = e.mst_key' END)
        USING model_table, test_table, mst_key;
END $$;

CREATE FUNCTION madlib.madlib_keras_evaluate(model_table varchar, test_table varchar, output_table varchar,
                                             use_gpus boolean DEFAULT FALSE, mst_key integer DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_keras_evaluate(madlib.__hopper_input_name(model_table), madlib.__hopper_input_name(test_table),
               madlib.__hopper_output_name(output_table), use_gpus, mst_key);
END;

-- MADlib 2.x's prediction table: one row per test row and class (id, class_name, class_value, prob,
-- rank), from hopper.predict's probabilities; pred_type 'prob' (the default) keeps every class,
-- 'response' the first-ranked one (without rank), a number below 1 the classes above that probability,
-- an integer from 1 up the classes ranked up to it. The table hopper.predict made (and registered) is
-- reshaped (made anew with its mark). Regression models keep hopper's shape (MADlib predicts classes only).
-- The rows pred_type keeps, as a condition on prob and rank; raises for a pred_type that is none of
-- those, which the predict functions check before anything is predicted.
CREATE FUNCTION madlib.__hopper_pred_type_rows(pred_type text) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    limit_value float8;
BEGIN
    pred_type := lower(btrim(COALESCE(pred_type, 'prob')));
    IF pred_type = 'response' THEN
        RETURN 'rank = 1';
    ELSIF pred_type = 'prob' THEN
        RETURN 'true';
    END IF;
    BEGIN
        limit_value := pred_type::float8;
    EXCEPTION WHEN invalid_text_representation THEN
        limit_value := NULL;
    END;
    -- MADlib's rule (madlib_keras_validator.py_in validate_pred_type): an integer > 0 is a rank, a
    -- double in [0.0, 1.0) a probability (0.0: every class of positive probability). A number written
    -- with a point or an exponent is a double (the double precision overloads pass 0.0 as '0.0'), so
    -- integer 0 is refused and 0.0 is not, 1.0 is refused and 1 is not, as in MADlib.
    IF limit_value IS NULL
       OR (pred_type ~ '^[+-]?[0-9]+$' AND limit_value <= 0)
       OR (pred_type !~ '^[+-]?[0-9]+$' AND NOT (limit_value >= 0 AND limit_value < 1)) THEN
        RAISE EXCEPTION 'invalid pred_type %', pred_type USING ERRCODE = 'invalid_parameter_value',
            HINT = 'pred_type is ''prob'', ''response'', a probability limit in [0.0, 1.0) or a rank (an integer from 1).';
    END IF;
    RETURN CASE WHEN pred_type ~ '^[+-]?[0-9]+$' THEN format('rank <= %s', limit_value::int8)
                ELSE format('prob > %s', limit_value) END;
END $$;

-- A double precision pred_type as text that reads as a double (0.0 -> '0.0', not '0', which is
-- MADlib's integer 0: refused where the double 0.0 is not).
CREATE FUNCTION madlib.__hopper_double_text(pred_type float8) RETURNS text
LANGUAGE sql IMMUTABLE
BEGIN ATOMIC
    SELECT CASE WHEN pred_type::pg_catalog.text OPERATOR(pg_catalog.~) '^[+-]?[0-9]+$'
                THEN pred_type::pg_catalog.text OPERATOR(pg_catalog.||) '.0' ELSE pred_type::pg_catalog.text END;
END;

CREATE FUNCTION madlib.__hopper_predict_rows(output_table text, id_col text, pred_type text, class_name text,
                                             class_values text[])
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    out regclass := madlib.__hopper_quote_name(output_table)::regclass;
    id text := quote_ident((parse_ident(id_col))[1]);
    keep text := madlib.__hopper_pred_type_rows(pred_type);
    nsp name;
    rel name;
    note text;
BEGIN
    pred_type := lower(btrim(COALESCE(pred_type, 'prob')));
    PERFORM madlib.__hopper_drop_temp_table('__hopper_predict_rows');
    EXECUTE format('CREATE TEMP TABLE __hopper_predict_rows AS SELECT %s AS id, prob FROM %s', id, out);
    -- Made anew under its name and with its comment (hopper's mark of the table it made): altered in
    -- place, its dropped columns would stay in pg_attribute, where MADlib's tests count columns.
    SELECT n.nspname, c.relname, obj_description(c.oid, 'pg_class') INTO nsp, rel, note
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = out;
    EXECUTE format('DROP TABLE %s', out);
    EXECUTE format('CREATE TABLE %I.%I AS SELECT id AS %s, NULL::text AS class_name, NULL::text AS class_value,
                        NULL::float8 AS prob %s FROM pg_temp.__hopper_predict_rows WITH NO DATA',
                   nsp, rel, id, CASE WHEN pred_type = 'response' THEN '' ELSE ', NULL::int4 AS rank' END);
    EXECUTE format('COMMENT ON TABLE %I.%I IS %L', nsp, rel, note);
    EXECUTE format('INSERT INTO %I.%I SELECT id, class_name, class_value, prob %s
                    FROM (SELECT t.id, $1 AS class_name, u.v AS class_value, u.p::float8 AS prob,
                        row_number() OVER (PARTITION BY t.id ORDER BY u.p DESC, u.i)::int4 AS rank
                    FROM pg_temp.__hopper_predict_rows t, unnest(t.prob, $2) WITH ORDINALITY AS u(p, v, i)) q WHERE %s',
                   nsp, rel, CASE WHEN pred_type = 'response' THEN '' ELSE ', rank' END, keep)
        USING class_name, class_values;
    DROP TABLE pg_temp.__hopper_predict_rows;
END $$;

-- predict reads a table of rows; a table training_preprocessor_dl packed (buffers of rows) is
-- refused, as MADlib refuses it.
CREATE FUNCTION madlib.__hopper_not_packed(test_table text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t regclass := to_regclass(test_table);
BEGIN
    IF t IS NOT NULL AND madlib.__hopper_made(t, 'packed') THEN
        RAISE EXCEPTION 'test_table % is a packed table', test_table USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Its rows are buffers of training_preprocessor_dl; predict reads one row per id.',
            HINT = 'Predict on the table of rows it was packed from.';
    END IF;
END $$;

-- The class names MADlib's predict gives: the model summary's <y>_class_values where it names one
-- per output -- MADlib reads them there, and its scripts change them (an integer coding of the same
-- classes) -- else hopper's class_values as MADlib shows them (__hopper_madlib_classes).
CREATE FUNCTION madlib.__hopper_prediction_classes(summary regclass, y text, class_values text[]) RETURNS text[]
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    madlib_classes text[];
BEGIN
    IF EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
               WHERE a.attrelid = summary AND a.attname = y || '_class_values' AND NOT a.attisdropped
                 AND t.typcategory = 'A' AND t.oid < 16384) THEN
        EXECUTE format('SELECT %I::text[] FROM %s', y || '_class_values', summary) INTO madlib_classes;
        IF cardinality(madlib_classes) = cardinality(class_values) THEN
            RETURN madlib_classes;
        END IF;
    END IF;
    RETURN madlib.__hopper_madlib_classes(class_values);
END $$;

-- Images of another shape than the model's input (3 x 32 x 32 for a model of 32 x 32 x 3 images: as
-- many numbers) are refused, as MADlib refuses them; flat arrays are left to hopper's own check.
CREATE FUNCTION madlib.__hopper_check_image_shape(model_table text, mst_key integer, test_table text, x text)
RETURNS void LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c record := madlib.__hopper_column(test_table, x);
    dims int[];
    input_shape int[];
BEGIN
    IF c.category IS DISTINCT FROM 'A' THEN
        RETURN;
    END IF;
    EXECUTE format('SELECT ARRAY(SELECT array_length(v, d) FROM generate_series(1, array_ndims(v)) d ORDER BY d)
                    FROM (SELECT %I AS v FROM %s WHERE %I IS NOT NULL LIMIT 1) s', c.col, test_table::regclass, c.col)
        INTO dims;
    PERFORM madlib.__hopper_require_builtin_columns(madlib.__hopper_quote_name(model_table)::regclass, NULL, 'model table');
    EXECUTE format('SELECT ARRAY(SELECT jsonb_array_elements_text(hopper.model_state_info(model_weights)
                                        -> ''config'' -> ''architecture'' -> ''input_shape'')::int)
                    FROM %s WHERE $1 IS NULL OR mst_key = $1 ORDER BY mst_key LIMIT 1',
                   madlib.__hopper_quote_name(model_table)::regclass)
        INTO input_shape USING mst_key;
    IF cardinality(dims) > 1 AND cardinality(input_shape) > 0 AND dims IS DISTINCT FROM input_shape THEN
        RAISE EXCEPTION 'Input shape is (%) but model was trained with (%)', array_to_string(dims, ', '),
                        array_to_string(input_shape, ', ')
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Column %s of %s holds arrays of another shape than the model''s input.', c.col, test_table);
    END IF;
END $$;

CREATE FUNCTION madlib.__hopper_keras_predict(model_table text, test_table text, id_col text,
                                              independent_varname text, output_table text,
                                              pred_type text, use_gpus boolean, mst_key integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    s record;
    read_table text;
BEGIN
    PERFORM madlib.__hopper_required_table(model_table, 'model_table', 'input');
    PERFORM madlib.__hopper_required_table(test_table, 'test_table', 'input');
    PERFORM madlib.__hopper_required(id_col IS NOT NULL, 'id_col');
    PERFORM madlib.__hopper_required(independent_varname IS NOT NULL, 'independent_varname');
    PERFORM madlib.__hopper_required_table(output_table, 'output_table', 'output');
    PERFORM madlib.__hopper_no_gpus(use_gpus);
    PERFORM madlib.__hopper_pred_type_rows(pred_type);
    PERFORM madlib.__hopper_not_packed(test_table);
    PERFORM madlib.__hopper_check_image_shape(model_table, mst_key, test_table, independent_varname);
    read_table := madlib.__hopper_flat_source(test_table, independent_varname, id_col);
    PERFORM hopper.predict(model_table, read_table, id_col, independent_varname, output_table, 'prob', mst_key);
    IF read_table IS DISTINCT FROM test_table THEN
        DROP TABLE pg_temp.__hopper_flat_source;
    END IF;
    EXECUTE format('SELECT response_type, %s AS dependent_varname, class_values FROM %s',
                   madlib.__hopper_summary_text(madlib.__hopper_quote_name(model_table, '_summary')::regclass,
                                                'dependent_varname'),
                   madlib.__hopper_quote_name(model_table, '_summary')::regclass) INTO s;
    IF s.response_type = 'classification' THEN
        PERFORM madlib.__hopper_predict_rows(output_table, id_col, pred_type, s.dependent_varname,
                                             madlib.__hopper_prediction_classes(
                                                 madlib.__hopper_quote_name(model_table, '_summary')::regclass,
                                                 s.dependent_varname, s.class_values));
    END IF;
END $$;

CREATE FUNCTION madlib.madlib_keras_predict(model_table varchar, test_table varchar, id_col varchar,
                                            independent_varname varchar, output_table varchar,
                                            pred_type varchar DEFAULT 'prob', use_gpus boolean DEFAULT FALSE,
                                            mst_key integer DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_keras_predict(madlib.__hopper_input_name(model_table), madlib.__hopper_input_name(test_table),
               id_col, independent_varname, madlib.__hopper_output_name(output_table), pred_type, use_gpus, mst_key);
END;

-- MADlib's pred_type as a number: a rank limit (integer) or a probability limit.
CREATE FUNCTION madlib.madlib_keras_predict(model_table varchar, test_table varchar, id_col varchar,
                                            independent_varname varchar, output_table varchar,
                                            pred_type integer, use_gpus boolean DEFAULT FALSE,
                                            mst_key integer DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_keras_predict(madlib.__hopper_input_name(model_table), madlib.__hopper_input_name(test_table),
               id_col, independent_varname, madlib.__hopper_output_name(output_table), pred_type::text, use_gpus, mst_key);
END;

CREATE FUNCTION madlib.madlib_keras_predict(model_table varchar, test_table varchar, id_col varchar,
                                            independent_varname varchar, output_table varchar,
                                            pred_type double precision, use_gpus boolean DEFAULT FALSE,
                                            mst_key integer DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_keras_predict(madlib.__hopper_input_name(model_table), madlib.__hopper_input_name(test_table),
               id_col, independent_varname, madlib.__hopper_output_name(output_table),
               madlib.__hopper_double_text(pred_type), use_gpus, mst_key);
END;

-- Bring your own model: the weights of a row of the architecture table (a hopper model state, e.g.
-- copied there from a model table as MADlib's docs do), scored with hopper.model_forward into
-- hopper.predict's shape, then MADlib's rows as above. class_values: MADlib's one array per dependent
-- variable (ARRAY[ARRAY[...]]) or a flat one; without them the classes are 0, 1, ...
CREATE FUNCTION madlib.__hopper_keras_predict_byom(model_arch_table text, model_id integer, test_table text, id_col text,
                                                   independent_varname text, output_table text, pred_type text,
                                                   use_gpus boolean, class_values text[], normalizing_const float8,
                                                   dependent_count integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    weights bytea;
    found boolean;
    classes text[];
    read_table text;
    outputs integer;
BEGIN
    PERFORM madlib.__hopper_required_table(model_arch_table, 'model_arch_table', 'input');
    PERFORM madlib.__hopper_required(model_id IS NOT NULL, 'model_id');
    PERFORM madlib.__hopper_required_table(test_table, 'test_table', 'input');
    PERFORM madlib.__hopper_required(id_col IS NOT NULL, 'id_col');
    PERFORM madlib.__hopper_required(independent_varname IS NOT NULL, 'independent_varname');
    PERFORM madlib.__hopper_required_table(output_table, 'output_table', 'output');
    PERFORM madlib.__hopper_no_gpus(use_gpus);
    PERFORM madlib.__hopper_pred_type_rows(pred_type);
    PERFORM madlib.__hopper_not_packed(test_table);
    IF COALESCE(dependent_count, 1) <> 1 THEN
        PERFORM madlib.__hopper_unsupported('dependent_count ' || dependent_count || ' (multi-output models)',
                                            'hopper''s models have one output.', 'Leave out dependent_count.');
    END IF;
    PERFORM madlib.__hopper_require_builtin_columns(madlib.__hopper_quote_name(model_arch_table)::regclass,
                                                    ARRAY['model_id', 'model_weights'], 'model architecture table');
    EXECUTE format('SELECT true, model_weights FROM %s WHERE model_id = $1', madlib.__hopper_quote_name(model_arch_table)::regclass)
        INTO found, weights USING model_id;
    IF found IS NULL THEN
        RAISE EXCEPTION 'model_id % does not exist in model architecture table %', model_id, model_arch_table
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF weights IS NULL THEN
        RAISE EXCEPTION 'model_id % of % has no model_weights', model_id, model_arch_table USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Copy a trained model''s model_weights into that row (UPDATE ... SET model_weights = m.model_weights FROM model m).';
    END IF;
    classes := CASE WHEN array_ndims(class_values) > 1 THEN ARRAY(SELECT unnest(class_values[1:1])) ELSE class_values END;
    read_table := madlib.__hopper_flat_source(test_table, independent_varname, id_col);
    PERFORM madlib.__hopper_require_builtin_columns(madlib.__hopper_quote_name(read_table)::regclass,
                                                    ARRAY[(parse_ident(independent_varname))[1]], 'independent');
    -- As MADlib: class_values name every output of the model (as many as its output units), else
    -- refused before anything is written (fewer left rows with a NULL class_value).
    IF classes IS NOT NULL THEN
        EXECUTE format('SELECT cardinality(hopper.model_forward($1, t.%s::pg_catalog.float8[], $2)) FROM %s t LIMIT 1',
                       quote_ident((parse_ident(independent_varname))[1]), madlib.__hopper_quote_name(read_table)::regclass)
            INTO outputs USING weights, COALESCE(normalizing_const, 1.0);
        IF outputs <> cardinality(classes) THEN
            RAISE EXCEPTION 'class_values name % classes, but model_id % has % outputs', cardinality(classes), model_id, outputs
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = 'MADlib refuses it too: "The number of class values do not match the provided architecture."',
                      HINT = 'Give one class value per output unit of the model, in the order of its outputs.';
        END IF;
    END IF;
    EXECUTE format('CREATE TABLE %s AS SELECT t.%s, NULL::text AS estimated_dependent_var,
                        hopper.model_forward($1, t.%s::pg_catalog.float8[], $2) AS prob FROM %s t',
                   madlib.__hopper_quote_name(output_table), quote_ident((parse_ident(id_col))[1]),
                   quote_ident((parse_ident(independent_varname))[1]), madlib.__hopper_quote_name(read_table)::regclass)
        USING weights, COALESCE(normalizing_const, 1.0);
    IF read_table IS DISTINCT FROM test_table THEN
        DROP TABLE pg_temp.__hopper_flat_source;
    END IF;
    IF classes IS NULL THEN
        EXECUTE format('SELECT ARRAY(SELECT g::text FROM generate_series(0, max(cardinality(prob)) - 1) g) FROM %s',
                       madlib.__hopper_quote_name(output_table)::regclass) INTO classes;
    END IF;
    PERFORM madlib.__hopper_predict_rows(output_table, id_col, pred_type, 'dependent_var', classes);
END $$;

CREATE FUNCTION madlib.madlib_keras_predict_byom(model_arch_table varchar, model_id integer, test_table varchar,
                                                 id_col varchar, independent_varname varchar, output_table varchar,
                                                 pred_type varchar DEFAULT 'prob', use_gpus boolean DEFAULT NULL,
                                                 class_values text[] DEFAULT NULL,
                                                 normalizing_const double precision DEFAULT NULL,
                                                 dependent_count integer DEFAULT 1)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_keras_predict_byom(madlib.__hopper_input_name(model_arch_table), model_id,
               madlib.__hopper_input_name(test_table), id_col, independent_varname,
               madlib.__hopper_output_name(output_table), pred_type, use_gpus, class_values, normalizing_const,
               dependent_count);
END;

-- MADlib's pred_type as a number, as madlib_keras_predict's: a rank limit (integer) or a probability
-- limit (double precision; 0.5 unquoted). MADlib's numeric overloads have no dependent_count.
CREATE FUNCTION madlib.madlib_keras_predict_byom(model_arch_table varchar, model_id integer, test_table varchar,
                                                 id_col varchar, independent_varname varchar, output_table varchar,
                                                 pred_type integer, use_gpus boolean DEFAULT NULL,
                                                 class_values text[] DEFAULT NULL,
                                                 normalizing_const double precision DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_keras_predict_byom(madlib.__hopper_input_name(model_arch_table), model_id,
               madlib.__hopper_input_name(test_table), id_col, independent_varname,
               madlib.__hopper_output_name(output_table), pred_type::text, use_gpus, class_values, normalizing_const, 1);
END;

CREATE FUNCTION madlib.madlib_keras_predict_byom(model_arch_table varchar, model_id integer, test_table varchar,
                                                 id_col varchar, independent_varname varchar, output_table varchar,
                                                 pred_type double precision, use_gpus boolean DEFAULT NULL,
                                                 class_values text[] DEFAULT NULL,
                                                 normalizing_const double precision DEFAULT NULL)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_keras_predict_byom(madlib.__hopper_input_name(model_arch_table), model_id,
               madlib.__hopper_input_name(test_table), id_col, independent_varname,
               madlib.__hopper_output_name(output_table), madlib.__hopper_double_text(pred_type), use_gpus,
               class_values, normalizing_const, 1);
END;

-- ---- MADlib's train_test_split (its sampling module; every example of MADlib's docs starts with it) --
-- As MADlib draws: per group (grouping_cols), a random ceil((train + test) share) of the rows, of
-- which a random ceil(test / (train + test)) share is the test set and the rest the training set.
-- random() is the session's generator, so setseed() makes it repeatable, as in MADlib's examples.
-- Outputs: <output>_train and <output>_test, or one table <output> with column split (1 train, 0 test).
CREATE FUNCTION madlib.__hopper_columns(list text, argument text) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    out text[] := '{}';
    c text;
BEGIN
    FOREACH c IN ARRAY regexp_split_to_array(list, '\s*,\s*') LOOP
        BEGIN
            out := out || quote_ident((parse_ident(btrim(c)))[1]);
        EXCEPTION WHEN invalid_parameter_value THEN
            RAISE EXCEPTION 'invalid column name "%" in %', btrim(c), argument USING ERRCODE = 'invalid_name';
        END;
    END LOOP;
    RETURN array_to_string(out, ', ');
END $$;

CREATE FUNCTION madlib.__hopper_train_test_split(source_table text, output_table text, train_proportion float8,
                                                 test_proportion float8, grouping_cols text, target_cols text,
                                                 with_replacement boolean, separate_output_tables boolean)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    src regclass;
    cols text;
    groups text;
    total float8;
    picked text;
    test text;
BEGIN
    PERFORM madlib.__hopper_required_table(source_table, 'source_table', 'input');
    PERFORM madlib.__hopper_required_table(output_table, 'output_table', 'output');
    PERFORM madlib.__hopper_required(train_proportion IS NOT NULL, 'train_proportion');
    src := madlib.__hopper_quote_name(source_table)::regclass;
    test_proportion := COALESCE(test_proportion, 1 - train_proportion);
    IF NOT (train_proportion > 0 AND train_proportion < 1 AND test_proportion > 0 AND test_proportion < 1) THEN
        RAISE EXCEPTION 'Sample: Proportions aren''t in the range (0,1)!' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF with_replacement THEN
        PERFORM madlib.__hopper_unsupported('with_replacement => TRUE', 'hopper_madlib''s train_test_split draws without replacement.',
                                            'Leave out with_replacement, or pass FALSE.');
    END IF;
    total := train_proportion + test_proportion;
    IF total > 1 THEN
        RAISE EXCEPTION 'Sample: Proportions add up to greater than 1!' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    cols := CASE WHEN NULLIF(btrim(target_cols), '') IS NULL OR btrim(target_cols) = '*' THEN 't.*'
                 ELSE (SELECT string_agg('t.' || c, ', ') FROM regexp_split_to_table(madlib.__hopper_columns(target_cols, 'target_cols'), ', ') c) END;
    groups := CASE WHEN NULLIF(btrim(grouping_cols), '') IS NULL THEN ''
                   ELSE 'PARTITION BY ' || madlib.__hopper_columns(grouping_cols, 'grouping_cols') END;
    PERFORM madlib.__hopper_drop_temp_table('__hopper_split');
    -- n: the group's rows; r: a random order within the group.
    EXECUTE format('CREATE TEMP TABLE __hopper_split AS SELECT %s, count(*) OVER (%s) AS __hopper_n,
                        row_number() OVER (%s ORDER BY random()) AS __hopper_r FROM %s t', cols, groups, groups, src);
    picked := format('ceil(%s * __hopper_n - 1e-9)', total);
    test := format('__hopper_r <= ceil(%s * %s - 1e-9)', test_proportion / total, picked);
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols FROM pg_attribute a
    WHERE a.attrelid = 'pg_temp.__hopper_split'::regclass AND a.attnum > 0 AND a.attname NOT LIKE '\_\_hopper\_%';
    IF COALESCE(separate_output_tables, false) THEN
        EXECUTE format('CREATE TABLE %s AS SELECT %s FROM pg_temp.__hopper_split WHERE %s',
                       madlib.__hopper_quote_name(output_table, '_test'), cols, test);
        EXECUTE format('CREATE TABLE %s AS SELECT %s FROM pg_temp.__hopper_split WHERE NOT %s AND __hopper_r <= %s',
                       madlib.__hopper_quote_name(output_table, '_train'), cols, test, picked);
    ELSE
        EXECUTE format('CREATE TABLE %s AS SELECT %s, CASE WHEN %s THEN 0 ELSE 1 END AS split
                        FROM pg_temp.__hopper_split WHERE __hopper_r <= %s ORDER BY split',
                       madlib.__hopper_quote_name(output_table), cols, test, picked);
    END IF;
    DROP TABLE pg_temp.__hopper_split;
END $$;

CREATE FUNCTION madlib.train_test_split(source_table text, output_table text, train_proportion float8,
                                        test_proportion float8 DEFAULT NULL, grouping_cols text DEFAULT NULL,
                                        target_cols text DEFAULT NULL, with_replacement boolean DEFAULT FALSE,
                                        separate_output_tables boolean DEFAULT FALSE)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_train_test_split(madlib.__hopper_input_name(source_table), madlib.__hopper_output_name(output_table),
               train_proportion, test_proportion, grouping_cols, target_cols, with_replacement, separate_output_tables);
END;

-- ---- MADlib's utilities around training --------------------------------------------------------
-- MADlib's Hyperband schedule (its own formula: brackets s = s_max .. 0, rounds i, n_i configurations
-- trained r_i iterations each), for planning a madlib_keras_automl run. MADlib computes it on
-- Greenplum only; hopper's own plan of a run is in hopper.search_brackets.
CREATE FUNCTION madlib.__hopper_hyperband_schedule(schedule_table text, r integer, eta integer, skip_last integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    s_max integer;
BEGIN
    PERFORM madlib.__hopper_required_table(schedule_table, 'schedule_table', 'output');
    PERFORM madlib.__hopper_required(r IS NOT NULL, 'r');
    eta := COALESCE(eta, 3);
    skip_last := COALESCE(skip_last, 0);
    IF eta <= 1 THEN
        RAISE EXCEPTION 'hyperband_schedule: eta must be greater than 1' USING ERRCODE = 'invalid_parameter_value';
    ELSIF r < eta THEN
        RAISE EXCEPTION 'hyperband_schedule: R should not be less than eta' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    s_max := floor(log(eta::numeric, r::numeric));
    IF skip_last < 0 OR skip_last > s_max THEN
        RAISE EXCEPTION 'hyperband_schedule: skip_last must be non-negative and less than %', s_max
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    EXECUTE format('CREATE TABLE %s (s integer, i integer, n_i integer, r_i integer, UNIQUE (s, i))',
                   madlib.__hopper_quote_name(schedule_table));
    EXECUTE format('INSERT INTO %s
        SELECT b.s, k.i, trunc(b.n / ($2::numeric ^ k.i))::integer, round($1::numeric / ($2::numeric ^ b.s) * ($2::numeric ^ k.i))::integer
        FROM (SELECT s, ceil(floor(($3 + 1) / (s + 1)) * ($2::numeric ^ s)) AS n FROM generate_series($3, 0, -1) s) b,
             generate_series(0, b.s - $4) k(i)', madlib.__hopper_quote_name(schedule_table)::regclass)
        USING r, eta, s_max, skip_last;
END $$;

CREATE FUNCTION madlib.hyperband_schedule(schedule_table varchar, r integer, eta integer DEFAULT 3, skip_last integer DEFAULT 0)
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_hyperband_schedule(madlib.__hopper_output_name(schedule_table), r, eta, skip_last);
END;

-- MADlib's list of the GPUs of each host: hopper trains on CPUs, so the table it makes lists none.
CREATE FUNCTION madlib.__hopper_gpu_configuration(output_table text, source text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM madlib.__hopper_required_table(output_table, 'output_table', 'output');
    IF lower(COALESCE(source, 'tensorflow')) NOT IN ('tensorflow', 'nvidia') THEN
        RAISE EXCEPTION 'gpu_configuration: source must be tensorflow or nvidia' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    EXECUTE format('CREATE TABLE %s (hostname text, gpu_descr text)', madlib.__hopper_quote_name(output_table));
END $$;

CREATE FUNCTION madlib.gpu_configuration(output_table text, source text DEFAULT 'tensorflow')
RETURNS void LANGUAGE sql
BEGIN ATOMIC
    SELECT madlib.__hopper_gpu_configuration(madlib.__hopper_output_name(output_table), source);
END;

-- MADlib's build information, the first cell of MADlib's notebooks: 'MADlib version: X, git revision:
-- ..., C++ compiler: ...'. MADlib's own code reads the version as the last word before the first
-- comma (utilities.py_in madlib_version); X is the MADlib release whose deep-learning SQL this
-- extension follows, and the other fields say what answers: hopper_madlib and hopper, their versions.
CREATE FUNCTION madlib.version() RETURNS text
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT pg_catalog.format('MADlib version: 1.21.0, git revision: none (hopper_madlib %s: MADlib''s deep-learning SQL '
                             'over hopper %s, no MADlib code), cmake configuration time: none, build type: hopper_madlib %s, '
                             'build system: PostgreSQL %s, C compiler: none, C++ compiler: none',
                             (SELECT e.extversion FROM pg_catalog.pg_extension e
                              WHERE e.extname OPERATOR(pg_catalog.=) 'hopper_madlib'),
                             (SELECT e.extversion FROM pg_catalog.pg_extension e
                              WHERE e.extname OPERATOR(pg_catalog.=) 'hopper'),
                             (SELECT e.extversion FROM pg_catalog.pg_extension e
                              WHERE e.extname OPERATOR(pg_catalog.=) 'hopper_madlib'),
                             pg_catalog.current_setting('server_version'));
END;

-- ---- help -------------------------------------------------------------------------------------
-- MADlib's help forms: madlib.<function>() and madlib.<function>('usage' | 'help' | ...) return a
-- text about the function, as MADlib's do; here what hopper_madlib does, its signature and what it
-- maps onto (docs/madlib.md says the rest).
CREATE FUNCTION madlib.__hopper_help(fn text, message text) RETURNS varchar
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    what text;
    usage text;
    maps text;
BEGIN
    SELECT h.what, h.usage, h.maps INTO what, usage, maps FROM (VALUES
        ('training_preprocessor_dl',
         'packs a table of features and labels into MADlib 2.x''s packed table (buffers of rows) and hopper''s, for training',
         'training_preprocessor_dl(source_table, output_table, dependent_varname, independent_varname, buffer_size, normalizing_const, num_classes, distribution_rules)',
         'hopper.preprocess'),
        ('validation_preprocessor_dl',
         'packs a validation or test table as the training table it names was packed (its classes and normalizing_const)',
         'validation_preprocessor_dl(source_table, output_table, dependent_varname, independent_varname, training_preprocessor_table, buffer_size, distribution_rules)',
         'hopper.preprocess_validation'),
        ('load_keras_model',
         'adds a Keras architecture (model.to_json()) and optional weights to a model architecture table, made if absent',
         'load_keras_model(keras_model_arch_table, model_arch, model_weights, name, description, model_id)',
         'hopper.load_model_arch'),
        ('delete_keras_model',
         'deletes an architecture from a model architecture table (the table is dropped with its last one)',
         'delete_keras_model(keras_model_arch_table, model_id)',
         'hopper.delete_model_arch'),
        ('load_model_selection_table',
         'makes a model selection table: every combination of the architectures, compile_params and fit_params given',
         'load_model_selection_table(model_arch_table, model_selection_table, model_id_list, compile_params_list, fit_params_list, object_table)',
         'hopper.load_model_selection_table'),
        ('generate_model_configs',
         'makes (or appends to) a model selection table from grids of compile and fit parameters, by grid or random search',
         'generate_model_configs(model_arch_table, model_selection_table, model_id_list, compile_params_grid, fit_params_grid, search_type, num_configs, random_state, object_table)',
         'hopper.generate_model_configs'),
        ('madlib_keras_fit',
         'trains one model of an architecture on a packed table; writes the model table and its _summary',
         'madlib_keras_fit(source_table, model, model_arch_table, model_id, compile_params, fit_params, num_iterations, use_gpus, validation_table, metrics_compute_frequency, warm_start, name, description, object_table)',
         'CALL hopper.fit'),
        ('madlib_keras_fit_multiple_model',
         'trains every configuration of a model selection table together by model hopping; writes the model table, _summary and _info',
         'madlib_keras_fit_multiple_model(source_table, model_output_table, model_selection_table, num_iterations, use_gpus, validation_table, metrics_compute_frequency, warm_start, name, description, use_caching)',
         'CALL hopper.fit_multiple'),
        ('madlib_keras_automl',
         'searches a space of configurations with Hyperband or Hyperopt''s random draws; writes the model table, _summary and _info',
         'madlib_keras_automl(source_table, model_output_table, model_arch_table, model_selection_table, model_id_list, compile_params_grid, fit_params_grid, automl_method, automl_params, random_state, object_table, use_gpus, validation_table, metrics_compute_frequency, name, description, use_caching)',
         'CALL hopper.fit_automl'),
        ('madlib_keras_evaluate',
         'evaluates a trained model (mst_key: one model of a multi-model table) on a packed table; writes loss, metric, metrics_type, loss_type',
         'madlib_keras_evaluate(model_table, test_table, output_table, use_gpus, mst_key)',
         'hopper.evaluate'),
        ('madlib_keras_predict',
         'predicts the rows of a table with a trained model; writes MADlib 2.x''s rows (id, class_name, class_value, prob, rank)',
         'madlib_keras_predict(model_table, test_table, id_col, independent_varname, output_table, pred_type, use_gpus, mst_key); pred_type ''prob'', ''response'', an integer rank or a probability limit in [0.0, 1.0)',
         'hopper.predict'),
        ('madlib_keras_predict_byom',
         'predicts with the weights of an architecture table''s row (bring your own model)',
         'madlib_keras_predict_byom(model_arch_table, model_id, test_table, id_col, independent_varname, output_table, pred_type, use_gpus, class_values, normalizing_const, dependent_count)',
         'hopper.model_forward'),
        ('load_custom_function',
         'stores a custom Keras function (a dill pickle) in an object table of schema madlib; hopper refuses to train with it (it runs no Python)',
         'load_custom_function(object_table, object, name, description)',
         'a table of schema madlib'),
        ('load_top_k_accuracy_function',
         'adds top_<k>_accuracy to an object table: hopper''s metric top_k_accuracy with top_k = k',
         'load_top_k_accuracy_function(object_table, k)',
         'a table of schema madlib'),
        ('delete_custom_function',
         'deletes a function from an object table, by id or name (the table is dropped with its last one)',
         'delete_custom_function(object_table, id | name)',
         'a table of schema madlib'),
        ('train_test_split',
         'splits a table at random into training and test rows, per group',
         'train_test_split(source_table, output_table, train_proportion, test_proportion, grouping_cols, target_cols, with_replacement, separate_output_tables)',
         'SQL'),
        ('hyperband_schedule',
         'writes the brackets and rounds of a Hyperband search (s, i, n_i configurations, r_i iterations), as madlib_keras_automl trains them',
         'hyperband_schedule(schedule_table, r, eta, skip_last)',
         'SQL'),
        ('gpu_configuration',
         'writes the GPUs of each host (hostname, gpu_descr): none, hopper trains on CPUs',
         'gpu_configuration(output_table, source)',
         'SQL')
    ) h(fn, what, usage, maps) WHERE h.fn = $1;
    message := lower(btrim(COALESCE(message, '')));
    IF message IN ('', 'help', '?', 'summary') THEN
        RETURN format(E'%s (hopper_madlib %s)\n%s: %s.\n%s\nFor the arguments: SELECT madlib.%s(''usage'');\n'
                      'hopper_madlib maps it onto %s; what differs from MADlib: docs/madlib.md of hopper.',
                      fn, (SELECT e.extversion FROM pg_extension e WHERE e.extname = 'hopper_madlib'), fn, what,
                      usage, fn, maps);
    ELSIF message IN ('usage', 'example', 'examples') THEN
        RETURN format(E'SELECT madlib.%s;\n%s: %s.\nMaps onto %s; every argument and how it differs from MADlib: '
                      'docs/madlib.md of hopper (MADlib''s user documentation has the examples).',
                      usage, fn, what, maps);
    END IF;
    RETURN format('No such option. Use "SELECT madlib.%s()" for help.', fn);
END $$;

CREATE FUNCTION madlib.training_preprocessor_dl(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('training_preprocessor_dl', message);
END;

CREATE FUNCTION madlib.training_preprocessor_dl() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('training_preprocessor_dl', '');
END;

CREATE FUNCTION madlib.validation_preprocessor_dl(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('validation_preprocessor_dl', message);
END;

CREATE FUNCTION madlib.validation_preprocessor_dl() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('validation_preprocessor_dl', '');
END;

CREATE FUNCTION madlib.load_keras_model(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('load_keras_model', message);
END;

CREATE FUNCTION madlib.load_keras_model() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('load_keras_model', '');
END;

CREATE FUNCTION madlib.delete_keras_model(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('delete_keras_model', message);
END;

CREATE FUNCTION madlib.delete_keras_model() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('delete_keras_model', '');
END;

CREATE FUNCTION madlib.load_model_selection_table(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('load_model_selection_table', message);
END;

CREATE FUNCTION madlib.load_model_selection_table() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('load_model_selection_table', '');
END;

CREATE FUNCTION madlib.generate_model_configs(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('generate_model_configs', message);
END;

CREATE FUNCTION madlib.generate_model_configs() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('generate_model_configs', '');
END;

CREATE FUNCTION madlib.madlib_keras_fit(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('madlib_keras_fit', message);
END;

CREATE FUNCTION madlib.madlib_keras_fit() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('madlib_keras_fit', '');
END;

CREATE FUNCTION madlib.madlib_keras_fit_multiple_model(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('madlib_keras_fit_multiple_model', message);
END;

CREATE FUNCTION madlib.madlib_keras_fit_multiple_model() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('madlib_keras_fit_multiple_model', '');
END;

CREATE FUNCTION madlib.madlib_keras_automl(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('madlib_keras_automl', message);
END;

CREATE FUNCTION madlib.madlib_keras_automl() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('madlib_keras_automl', '');
END;

CREATE FUNCTION madlib.madlib_keras_evaluate(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('madlib_keras_evaluate', message);
END;

CREATE FUNCTION madlib.madlib_keras_evaluate() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('madlib_keras_evaluate', '');
END;

CREATE FUNCTION madlib.madlib_keras_predict(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('madlib_keras_predict', message);
END;

CREATE FUNCTION madlib.madlib_keras_predict() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('madlib_keras_predict', '');
END;

CREATE FUNCTION madlib.madlib_keras_predict_byom(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('madlib_keras_predict_byom', message);
END;

CREATE FUNCTION madlib.madlib_keras_predict_byom() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('madlib_keras_predict_byom', '');
END;

CREATE FUNCTION madlib.load_custom_function(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('load_custom_function', message);
END;

CREATE FUNCTION madlib.load_custom_function() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('load_custom_function', '');
END;

CREATE FUNCTION madlib.load_top_k_accuracy_function(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('load_top_k_accuracy_function', message);
END;

CREATE FUNCTION madlib.load_top_k_accuracy_function() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('load_top_k_accuracy_function', '');
END;

CREATE FUNCTION madlib.delete_custom_function(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('delete_custom_function', message);
END;

CREATE FUNCTION madlib.delete_custom_function() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('delete_custom_function', '');
END;

CREATE FUNCTION madlib.train_test_split(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('train_test_split', message);
END;

CREATE FUNCTION madlib.train_test_split() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('train_test_split', '');
END;

CREATE FUNCTION madlib.hyperband_schedule(message varchar) RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('hyperband_schedule', message);
END;

CREATE FUNCTION madlib.hyperband_schedule() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('hyperband_schedule', '');
END;

CREATE FUNCTION madlib.gpu_configuration() RETURNS varchar
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT madlib.__hopper_help('gpu_configuration', '');
END;
