# hopper: PostgreSQL extension (PGXS). `make`, `make install`, `make installcheck` (pg_regress on
# test/regress/sql/*.sql against test/regress/expected/*.out; needs a running server, see test/cluster.sh).
EXTENSION   = hopper
EXTVERSION  = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" hopper.control)
MODULE_big  = hopper
PG_CONFIG  ?= /usr/lib/postgresql/15/bin/pg_config

CORE_SRCS = $(sort $(wildcard src/core/*.cpp))
PORT_SRCS = $(sort $(wildcard src/pg/*/*.cpp))
OBJS      = $(CORE_SRCS:.cpp=.o) $(PORT_SRCS:.cpp=.o)

# One source per SQL object: sql/objects/NAME.sql holds a function, procedure, aggregate (with its
# support functions), view, type or table, with its comment, grants, policies and triggers. The
# extension script is assembled from one file per feature area (sql/ext/NN_area.sql, in file-name
# order) and each upgrade script from sql/updates/hopper--OLD--NEW.sql; both take objects in with
# `#include "objects/NAME.sql"` lines (tools/sql-include.awk), so an upgrade re-creates exactly
# what a fresh install creates and the two cannot drift (test/structure/sql_sources.sh checks it).
EXT_PARTS   = $(sort $(wildcard sql/ext/*.sql))
SQL_OBJECTS = $(sort $(wildcard sql/objects/*.sql))
UPDATES     = $(patsubst sql/updates/%,sql/%,$(sort $(wildcard sql/updates/$(EXTENSION)--*--*.sql)))
DATA_built  = sql/$(EXTENSION)--$(EXTVERSION).sql $(UPDATES)
# Released versions: each one's install script, frozen as it shipped (and, once a later release
# ships, the upgrade scripts to it, frozen the same way). test/scripts/upgrade.sh installs the
# previous release, fills its tables and upgrades.
DATA        = $(sort $(wildcard sql/releases/$(EXTENSION)--*.sql))
# The optional MADlib compatibility extension (CREATE EXTENSION hopper_madlib; docs/madlib.md): SQL only.
DATA      += hopper_madlib.control $(sort $(wildcard sql/madlib/hopper_madlib--*.sql))

# Regression tests: test/regress/sql/NAME.sql against test/regress/expected/NAME.out (sql/ holds the
# extension's own SQL only).
REGRESS      = $(patsubst test/regress/sql/%.sql,%,$(sort $(wildcard test/regress/sql/*.sql)))
REGRESS_OPTS = --inputdir=test/regress --load-extension=$(EXTENSION)

# -march=native measured 2-5x faster Eigen float32 products than plain -O3 on this kind of machine.
# Portable packages: make HOPPER_OPT="-O3".
HOPPER_OPT ?= -O3 -march=native
PG_CPPFLAGS = -Iinclude -Isrc -isystem /usr/include/eigen3 -DEIGEN_DONT_PARALLELIZE -DHOPPER_VERSION=\"$(EXTVERSION)\"
# GCC 12 warns about its own AVX-512 intrinsics inside Eigen (-Wmaybe-uninitialized): false positives.
PG_CXXFLAGS = -std=c++17 $(HOPPER_OPT) -Wno-register -Wno-unused-parameter -Wno-maybe-uninitialized -fexceptions
# ONNX export and import (src/core/onnx_*.cpp) use the ONNX protobuf classes of Debian's libonnx-dev
# (libonnx_proto) and libprotobuf.
SHLIB_LINK  = -lstdc++ -lz -lonnx_proto -lprotobuf
# The core's large matrix products go to oneDNN where libdnnl-dev is installed (src/core/gemm.h:
# 113 vs 82 GFLOP/s on the MLP's step); `make HOPPER_GEMM=eigen` builds without it.
HOPPER_GEMM ?= $(if $(wildcard /usr/include/dnnl.h),onednn,eigen)
ifeq ($(HOPPER_GEMM),onednn)
PG_CPPFLAGS += -DHOPPER_WITH_ONEDNN
SHLIB_LINK  += -ldnnl -lgomp
endif
# Model states' CRC-32 through ISA-L where libisal-dev is installed (src/core/state_format.cpp: 8.6x
# zlib's speed); `make HOPPER_CRC=zlib` builds without it.
HOPPER_CRC ?= $(if $(wildcard /usr/include/isa-l/crc.h),isal,zlib)
ifeq ($(HOPPER_CRC),isal)
PG_CPPFLAGS += -DHOPPER_WITH_ISAL
SHLIB_LINK  += -lisal
endif

EXTRA_CLEAN = $(DATA_built)

# PGXS would also emit LLVM bitcode for every .cpp with clang, without our C++ flags (C++17 then
# fails, and the build takes 1.7x longer). The JIT simply skips the extension without it. Must be
# set before PGXS is included.
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

SQL_INCLUDE = awk -v dir=sql -f tools/sql-include.awk
sql/$(EXTENSION)--$(EXTVERSION).sql: $(EXT_PARTS) $(SQL_OBJECTS) tools/sql-include.awk hopper.control
	cat $(EXT_PARTS) | $(SQL_INCLUDE) > $@.tmp && mv $@.tmp $@
sql/$(EXTENSION)--%.sql: sql/updates/$(EXTENSION)--%.sql $(SQL_OBJECTS) tools/sql-include.awk
	$(SQL_INCLUDE) $< > $@.tmp && mv $@.tmp $@

# PostgreSQL compiles with -fno-strict-aliasing, which its own headers and macros need. The core
# never includes them (CMake builds and unit-tests it with strict aliasing), and strict aliasing
# makes its Eigen products ~10% faster (bench/: 0.168 vs 0.186 s per Fashion-MNIST epoch).
$(CORE_SRCS:.cpp=.o): override CXXFLAGS += -fstrict-aliasing

# Every object depends on the headers (small project: rebuild rather than track dependencies).
$(OBJS): $(wildcard include/hopper/*.h src/pg/*/*.h src/core/*.h)
