-- hopper_madlib 0.2.0: Apache MADlib's deep-learning functions (1.21 / 2.x signatures) in schema
-- madlib, each a thin mapping onto hopper's API (no second implementation): scripts written for
-- MADlib run on plain PostgreSQL. docs/madlib.md maps every argument. Arguments hopper cannot
-- honour (GPUs, custom Python objects, MADlib-only distributions) are refused with 0A000.
--
-- The functions take the caller's search_path for the caller's table names (as MADlib's do) and
-- call everything of their own schema-qualified, operators included.
\echo Use "CREATE EXTENSION hopper_madlib" to load this file. \quit

-- ---- shared checks -----------------------------------------------------------------------------
CREATE FUNCTION madlib.__hopper_unsupported(what text, detail text, hint text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is not supported by hopper', what USING ERRCODE = 'feature_not_supported', DETAIL = detail, HINT = hint;
END $$;

CREATE FUNCTION madlib.__hopper_no_gpus(use_gpus boolean, object_table text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF use_gpus THEN
        PERFORM madlib.__hopper_unsupported('use_gpus => TRUE', 'hopper trains on CPUs (oneDNN and Eigen products), in the database''s own processes.',
                                            'Leave out use_gpus, or pass FALSE.');
    END IF;
    IF object_table IS NOT NULL THEN
        PERFORM madlib.__hopper_unsupported('object_table (custom Python loss and metric functions)',
                                            'hopper runs no Python; its losses and metrics are built in (docs/madlib.md lists them).',
                                            'Leave out object_table and use a built-in loss and metrics.');
    END IF;
END $$;

-- MADlib's output shape: the model column is model_weights (hopper's functions read either name).
CREATE FUNCTION madlib.__hopper_madlib_shape(model_table text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a WHERE a.attrelid OPERATOR(pg_catalog.=) model_table::pg_catalog.regclass
               AND a.attname OPERATOR(pg_catalog.=) 'model_state' AND NOT a.attisdropped) THEN
        EXECUTE pg_catalog.format('ALTER TABLE %s RENAME COLUMN model_state TO model_weights', model_table::pg_catalog.regclass);
    END IF;
END $$;

-- MADlib's search spaces are Python dict literals: {'lr': [0.0001, 0.1, 'log'], 'optimizer': ['Adam']}.
-- As JSON, with MADlib's [low, high, 'linear' | 'log'] ranges as hopper's uniform / log_uniform.
CREATE FUNCTION madlib.__hopper_space(space text, what text) RETURNS jsonb
LANGUAGE plpgsql AS $$
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
                subs := subs OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_array(madlib.__hopper_space(s::text, what));
            END LOOP;
            out := out OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object(k, subs);
        ELSIF pg_catalog.jsonb_typeof(v) OPERATOR(pg_catalog.=) 'array' AND pg_catalog.jsonb_array_length(v) OPERATOR(pg_catalog.=) 3
              AND pg_catalog.jsonb_typeof(v OPERATOR(pg_catalog.->) 2) OPERATOR(pg_catalog.=) 'string'
              AND (v OPERATOR(pg_catalog.->>) 2) IN ('linear', 'log', 'log_near_one') THEN
            IF (v OPERATOR(pg_catalog.->>) 2) OPERATOR(pg_catalog.=) 'log_near_one' THEN
                PERFORM madlib.__hopper_unsupported('the ''log_near_one'' distribution (of ' || k || ')',
                    'hopper draws numbers uniformly or log-uniformly.', 'Use ''linear'' or ''log'', or list the values.');
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
CREATE FUNCTION madlib.training_preprocessor_dl(source_table varchar, output_table varchar, dependent_varname varchar,
                                                independent_varname varchar, buffer_size integer DEFAULT NULL,
                                                normalizing_const real DEFAULT 1.0, num_classes integer DEFAULT NULL,
                                                distribution_rules text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF num_classes IS NOT NULL THEN
        PERFORM madlib.__hopper_unsupported('num_classes', 'hopper takes the classes from the data (the summary lists them).',
                                            'Leave out num_classes.');
    END IF;
    IF distribution_rules IS NOT NULL AND pg_catalog.lower(distribution_rules) OPERATOR(pg_catalog.<>) 'all_segments' THEN
        PERFORM madlib.__hopper_unsupported('distribution_rules ' || distribution_rules,
                                            'hopper spreads the buffers over all of its segments.', 'Leave out distribution_rules.');
    END IF;
    PERFORM hopper.preprocess(source_table, output_table, dependent_varname, independent_varname,
                              buffer_size => buffer_size, normalizing_const => normalizing_const);
END $$;

CREATE FUNCTION madlib.validation_preprocessor_dl(source_table varchar, output_table varchar, dependent_varname varchar,
                                                  independent_varname varchar, training_preprocessor_table varchar,
                                                  buffer_size integer DEFAULT NULL, distribution_rules text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF distribution_rules IS NOT NULL AND pg_catalog.lower(distribution_rules) OPERATOR(pg_catalog.<>) 'all_segments' THEN
        PERFORM madlib.__hopper_unsupported('distribution_rules ' || distribution_rules,
                                            'hopper spreads the buffers over all of its segments.', 'Leave out distribution_rules.');
    END IF;
    PERFORM hopper.preprocess_validation(source_table, output_table, dependent_varname, independent_varname,
                                         training_preprocessor_table, buffer_size => buffer_size);
END $$;

-- ---- architectures and model selection tables -------------------------------------------------
CREATE FUNCTION madlib.load_keras_model(keras_model_arch_table varchar, model_arch json, model_weights bytea DEFAULT NULL,
                                        name text DEFAULT NULL, description text DEFAULT NULL, model_id integer DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF model_id IS NOT NULL THEN
        PERFORM madlib.__hopper_unsupported('model_id', 'hopper numbers architectures itself.', 'Leave out model_id.');
    END IF;
    PERFORM hopper.load_model_arch(keras_model_arch_table, model_arch::jsonb, name, description, model_weights);
END $$;

CREATE FUNCTION madlib.delete_keras_model(keras_model_arch_table varchar, model_id integer)
RETURNS void LANGUAGE sql AS $$ SELECT hopper.delete_model_arch(keras_model_arch_table, model_id) $$;

CREATE FUNCTION madlib.load_model_selection_table(model_arch_table varchar, model_selection_table varchar,
                                                  model_id_list integer[], compile_params_list varchar[],
                                                  fit_params_list varchar[], object_table varchar DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM madlib.__hopper_no_gpus(false, object_table);
    PERFORM hopper.load_model_selection_table(model_arch_table, model_selection_table, model_id_list,
                                              compile_params_list::text[], fit_params_list::text[]);
END $$;

CREATE FUNCTION madlib.generate_model_configs(model_arch_table varchar, model_selection_table varchar,
                                              model_id_list integer[], compile_params_grid varchar, fit_params_grid varchar,
                                              search_type varchar DEFAULT 'grid', num_configs integer DEFAULT NULL,
                                              random_state integer DEFAULT NULL, object_table varchar DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM madlib.__hopper_no_gpus(false, object_table);
    PERFORM hopper.generate_model_configs(model_arch_table, model_selection_table, model_id_list,
                                          madlib.__hopper_space(compile_params_grid, 'compile_params_grid'),
                                          madlib.__hopper_space(fit_params_grid, 'fit_params_grid'),
                                          search_type, num_configs, random_state);
END $$;

-- ---- training ---------------------------------------------------------------------------------
CREATE FUNCTION madlib.madlib_keras_fit(source_table varchar, model varchar, model_arch_table varchar, model_id integer,
                                        compile_params varchar, fit_params varchar, num_iterations integer,
                                        use_gpus boolean DEFAULT FALSE, validation_table varchar DEFAULT NULL,
                                        metrics_compute_frequency integer DEFAULT NULL, warm_start boolean DEFAULT FALSE,
                                        name varchar DEFAULT NULL, description varchar DEFAULT NULL,
                                        object_table varchar DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    arch jsonb;
    weights bytea;
    start uuid;
BEGIN
    PERFORM madlib.__hopper_no_gpus(use_gpus, object_table);
    EXECUTE pg_catalog.format('SELECT model_arch::pg_catalog.jsonb, model_weights FROM %s WHERE model_id OPERATOR(pg_catalog.=) $1',
                              model_arch_table::pg_catalog.regclass)
        INTO arch, weights USING model_id;
    IF arch IS NULL THEN
        RAISE EXCEPTION 'model_id % does not exist in model architecture table %', model_id, model_arch_table
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Transfer learning: the architecture row's weights (a hopper model state) become a checkpoint the
    -- run starts from. MADlib's warm start reads the weights of model; hopper's reads model_weights too.
    -- (MADlib's NULL for an optional argument means its default.)
    IF weights IS NOT NULL AND NOT COALESCE(warm_start, false) THEN
        start := hopper.create_checkpoint(weights, metadata => pg_catalog.jsonb_build_object(
                     'source', 'madlib.madlib_keras_fit transfer learning', 'model_arch_table', model_arch_table, 'model_id', model_id));
    END IF;
    CALL hopper.fit(source_table, model, arch, compile_params, COALESCE(fit_params, ''), num_iterations,
                    validation_table, COALESCE(metrics_compute_frequency, num_iterations), COALESCE(warm_start, false),
                    name, description,
                    warm_start_checkpoint => start);
    PERFORM madlib.__hopper_madlib_shape(model);
    -- MADlib's summary columns beside hopper's; hopper's training_metrics (where the training metrics
    -- came from) makes room for MADlib's array of them.
    EXECUTE pg_catalog.format('ALTER TABLE %s RENAME COLUMN training_metrics TO training_metrics_source',
                              (model || '_summary')::pg_catalog.regclass);
    EXECUTE pg_catalog.format('ALTER TABLE %1$s ADD COLUMN model pg_catalog.text, ADD COLUMN model_id pg_catalog.int4,
        ADD COLUMN compile_params pg_catalog.text, ADD COLUMN fit_params pg_catalog.text, ADD COLUMN object_table pg_catalog.text,
        ADD COLUMN use_gpus pg_catalog.bool, ADD COLUMN model_type pg_catalog.text, ADD COLUMN model_size pg_catalog.float8,
        ADD COLUMN metrics_elapsed_time pg_catalog.float8[], ADD COLUMN madlib_version pg_catalog.text,
        ADD COLUMN num_classes pg_catalog.int4, ADD COLUMN metrics_type pg_catalog.text[], ADD COLUMN loss_type pg_catalog.text,
        ADD COLUMN training_metrics_final pg_catalog.float8, ADD COLUMN training_loss_final pg_catalog.float8,
        ADD COLUMN training_metrics pg_catalog.float8[], ADD COLUMN training_loss pg_catalog.float8[],
        ADD COLUMN validation_metrics_final pg_catalog.float8, ADD COLUMN validation_loss_final pg_catalog.float8,
        ADD COLUMN validation_metrics pg_catalog.float8[], ADD COLUMN validation_loss pg_catalog.float8[]',
        (model || '_summary')::pg_catalog.regclass);
    EXECUTE pg_catalog.format('UPDATE %1$s s SET model = $1, model_id = $2, compile_params = i.compile_params,
        fit_params = i.fit_params, object_table = NULL, use_gpus = false, model_type = i.model_type, model_size = i.model_size,
        metrics_elapsed_time = i.metrics_elapsed_time, madlib_version = ''hopper '' OPERATOR(pg_catalog.||) s.hopper_version,
        num_classes = pg_catalog.cardinality(s.class_values), metrics_type = i.metrics_type, loss_type = i.loss_type,
        training_metrics_final = i.training_metrics_final, training_loss_final = i.training_loss_final,
        training_metrics = i.training_metrics, training_loss = i.training_loss,
        validation_metrics_final = i.validation_metrics_final, validation_loss_final = i.validation_loss_final,
        validation_metrics = i.validation_metrics, validation_loss = i.validation_loss FROM %2$s i',
        (model || '_summary')::pg_catalog.regclass, (model || '_info')::pg_catalog.regclass)
        USING model, model_id;
END $$;

CREATE FUNCTION madlib.madlib_keras_fit_multiple_model(source_table varchar, model_output_table varchar,
                                                       model_selection_table varchar, num_iterations integer,
                                                       use_gpus boolean DEFAULT FALSE, validation_table varchar DEFAULT NULL,
                                                       metrics_compute_frequency integer DEFAULT NULL,
                                                       warm_start boolean DEFAULT FALSE, name varchar DEFAULT NULL,
                                                       description varchar DEFAULT NULL, use_caching boolean DEFAULT FALSE)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    -- use_caching: hopper keeps the packed buffers of a run in memory anyway (hopper.buffer_cache_mb).
    PERFORM madlib.__hopper_no_gpus(use_gpus, NULL);
    CALL hopper.fit_multiple(source_table, model_output_table, model_selection_table, num_iterations, validation_table,
                             metrics_compute_frequency, COALESCE(warm_start, false), name, description);
    PERFORM madlib.__hopper_madlib_shape(model_output_table);
    EXECUTE pg_catalog.format('ALTER TABLE %1$s ADD COLUMN model_info pg_catalog.text, ADD COLUMN madlib_version pg_catalog.text,
        ADD COLUMN num_classes pg_catalog.int4', (model_output_table || '_summary')::pg_catalog.regclass);
    EXECUTE pg_catalog.format('UPDATE %1$s SET model_info = $1, madlib_version = ''hopper '' OPERATOR(pg_catalog.||) hopper_version,
        num_classes = pg_catalog.cardinality(class_values)', (model_output_table || '_summary')::pg_catalog.regclass)
        USING model_output_table || '_info';
END $$;

CREATE FUNCTION madlib.madlib_keras_automl(source_table varchar, model_output_table varchar, model_arch_table varchar,
                                           model_selection_table varchar, model_id_list integer[],
                                           compile_params_grid varchar, fit_params_grid varchar,
                                           automl_method varchar DEFAULT 'hyperband', automl_params varchar DEFAULT NULL,
                                           random_state integer DEFAULT NULL, object_table varchar DEFAULT NULL,
                                           use_gpus boolean DEFAULT FALSE, validation_table varchar DEFAULT NULL,
                                           metrics_compute_frequency integer DEFAULT NULL, name varchar DEFAULT NULL,
                                           description varchar DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    p record;
    r integer := 6;   -- MADlib's defaults: R = 6, eta = 3, skip_last = 0
    e integer := 3;
    skip integer := 0;
BEGIN
    PERFORM madlib.__hopper_no_gpus(use_gpus, object_table);
    IF pg_catalog.lower(automl_method) OPERATOR(pg_catalog.=) 'hyperopt' THEN
        PERFORM madlib.__hopper_unsupported('automl_method ''hyperopt''', 'hopper searches by Hyperband and successive halving.',
                                            'Use automl_method => ''hyperband''.');
    END IF;
    FOR p IN SELECT pg_catalog.lower(pg_catalog.btrim(pg_catalog.split_part(kv, '=', 1))) AS k,
                    pg_catalog.btrim(pg_catalog.split_part(kv, '=', 2)) AS v
             FROM pg_catalog.regexp_split_to_table(COALESCE(automl_params, ''), ',') kv
             WHERE pg_catalog.btrim(kv) OPERATOR(pg_catalog.<>) '' LOOP
        IF p.k OPERATOR(pg_catalog.=) 'r' THEN r := p.v::integer;
        ELSIF p.k OPERATOR(pg_catalog.=) 'eta' THEN e := p.v::integer;
        ELSIF p.k OPERATOR(pg_catalog.=) 'skip_last' THEN skip := p.v::integer;
        ELSE
            RAISE EXCEPTION 'unknown automl_params key "%"', p.k USING ERRCODE = 'invalid_parameter_value',
                HINT = 'Hyperband takes R, eta and skip_last, e.g. ''R=6, eta=3, skip_last=0''.';
        END IF;
    END LOOP;
    CALL hopper.fit_automl(source_table, model_output_table, model_arch_table, model_selection_table, model_id_list,
                           madlib.__hopper_space(compile_params_grid, 'compile_params_grid'),
                           madlib.__hopper_space(fit_params_grid, 'fit_params_grid'),
                           automl_method => automl_method, max_iterations => r, eta => e, skip_last => skip,
                           search_type => 'random', random_state => random_state, validation_table => validation_table,
                           metrics_compute_frequency => metrics_compute_frequency, name => name, description => description);
    PERFORM madlib.__hopper_madlib_shape(model_output_table);
END $$;

-- ---- using models -----------------------------------------------------------------------------
CREATE FUNCTION madlib.madlib_keras_evaluate(model_table varchar, test_table varchar, output_table varchar,
                                             use_gpus boolean DEFAULT FALSE, mst_key integer DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM madlib.__hopper_no_gpus(use_gpus, NULL);
    -- MADlib's shape: loss, metric, metrics_type, loss_type (the first compile metric).
    EXECUTE pg_catalog.format('CREATE TABLE %s AS
        SELECT e.loss, (SELECT v.value::pg_catalog.float8 FROM pg_catalog.jsonb_each_text(e.metrics) v LIMIT 1) AS metric,
               ARRAY(SELECT v.key FROM pg_catalog.jsonb_each_text(e.metrics) v LIMIT 1) AS metrics_type,
               i.loss_type
        FROM hopper.evaluate($1, $2, $3) e JOIN %s i ON i.mst_key OPERATOR(pg_catalog.=) e.mst_key',
        (SELECT pg_catalog.string_agg(pg_catalog.quote_ident(x), '.') FROM pg_catalog.unnest(pg_catalog.parse_ident(output_table)) x),
        (model_table || '_info')::pg_catalog.regclass)
        USING model_table, test_table, mst_key;
END $$;

CREATE FUNCTION madlib.madlib_keras_predict(model_table varchar, test_table varchar, id_col varchar,
                                            independent_varname varchar, output_table varchar,
                                            pred_type varchar DEFAULT 'response', use_gpus boolean DEFAULT FALSE,
                                            mst_key integer DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM madlib.__hopper_no_gpus(use_gpus, NULL);
    PERFORM hopper.predict(model_table, test_table, id_col, independent_varname, output_table,
                           COALESCE(pred_type, 'response'), mst_key);
END $$;
