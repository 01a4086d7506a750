-- hopper: train and select machine-learning models inside PostgreSQL.
-- This script is assembled from sql/ext/*.sql in file-name order by the Makefile.
\echo Use "CREATE EXTENSION hopper" to load this file. \quit

COMMENT ON SCHEMA hopper IS 'hopper: train and select machine-learning models inside PostgreSQL';
#include "objects/version.sql"
