-- The ids the registry hands out (identity columns) are not PUBLIC's to choose: PUBLIC may INSERT
-- into every other column of hopper's tables, not into these. With INSERT on a whole table, a role
-- could INSERT ... OVERRIDING SYSTEM VALUE the next thousand task or model ids under her own name,
-- and every later run, task and model of every other role failed with 23505 until she deleted them
-- (a hostile review). Re-run by every upgrade script after its tables change.
DO $$
DECLARE
    t pg_catalog.regclass;
    cols text;
BEGIN
    FOR t IN SELECT c.oid::pg_catalog.regclass FROM pg_catalog.pg_class c
             WHERE c.relnamespace OPERATOR(pg_catalog.=) 'hopper'::pg_catalog.regnamespace
               AND c.relkind OPERATOR(pg_catalog.=) 'r'
               AND EXISTS (SELECT FROM pg_catalog.pg_attribute a
                           WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND NOT a.attisdropped
                             AND a.attidentity OPERATOR(pg_catalog.<>) '')
             ORDER BY c.oid
    LOOP
        SELECT pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
        FROM pg_catalog.pg_attribute a
        WHERE a.attrelid OPERATOR(pg_catalog.=) t AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
          AND a.attidentity OPERATOR(pg_catalog.=) '';
        EXECUTE pg_catalog.format('REVOKE INSERT ON %s FROM PUBLIC', t);
        EXECUTE pg_catalog.format('GRANT INSERT (%s) ON %s TO PUBLIC', cols, t);
    END LOOP;
END
$$;
