-- MADlib's test setups and documentation examples write their PL/Python in `LANGUAGE plpythonu`, the
-- name madpack creates on the PostgreSQL releases MADlib d9a4ee58 supports (Python 2; PostgreSQL 15
-- has Python 3 only), as it installs MADlib (the yardstick runs this in each database it makes). MADlib's
-- Python 3 port (its PostgreSQL 13+ support) renames the language to plpython3u, the Python of these
-- setups being unchanged: here `plpythonu` is that language under MADlib's old name, where the server
-- has PL/Python (Debian's postgresql-plpython3-15; the dill the setups import: python3-dill).
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_available_extensions WHERE name = 'plpython3u') THEN
        CREATE EXTENSION IF NOT EXISTS plpython3u;
        CREATE LANGUAGE plpythonu HANDLER plpython3_call_handler INLINE plpython3_inline_handler
            VALIDATOR plpython3_validator;
    END IF;
END $$;
