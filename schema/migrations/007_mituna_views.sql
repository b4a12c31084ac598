-- tuna schema, version 7: MITuna's table and column names over tuna's tables, read-only, so
-- MITuna's SQL, SQLAlchemy models and dashboards read a tuna database (docs/OPERATIONS.md).
-- Re-runnable: ADD COLUMN IF NOT EXISTS, CREATE OR REPLACE VIEW.
--
-- conv_config, session and solver are tuna tables of the same names already; they get MITuna's
-- missing columns as VIRTUAL generated columns (computed on read, never stored, never written
-- by tuna). Everything else is a view. MITuna columns tuna has no data for read as MITuna's
-- defaults (valid 1, gpu_id -1, opencl 0, kernel_group NULL).
-- The MITuna views are ALGORITHM = TEMPTABLE, which is what makes them read-only in MariaDB (an
-- UPDATE or INSERT through one fails); the price is that a query materialises the view before
-- filtering it, so a dashboard over millions of results is slower than on MITuna's own tables.
-- The tuna_config_* helper views stay mergeable.

-- conv_config: MITuna's md5 (here MD5 of the canonical driver line; pad_mode is a real column since
-- version 6), the tensor ids
-- (the `tensor` view below: 2*id-1 the input, 2*id the weights) and BASE columns.
ALTER TABLE conv_config
  ADD COLUMN IF NOT EXISTS md5 CHAR(32) CHARACTER SET ascii AS (MD5(driver)) VIRTUAL,
  ADD COLUMN IF NOT EXISTS input_tensor BIGINT AS (2 * id - 1) VIRTUAL,
  ADD COLUMN IF NOT EXISTS weight_tensor BIGINT AS (2 * id) VIRTUAL,
  ADD COLUMN IF NOT EXISTS insert_ts DATETIME(6) AS (created_at) VIRTUAL,
  ADD COLUMN IF NOT EXISTS update_ts DATETIME(6) AS (created_at) VIRTUAL,
  ADD COLUMN IF NOT EXISTS valid TINYINT AS (1) VIRTUAL;

-- session: MITuna's version columns (tuna records its own and the compilers').
ALTER TABLE session
  ADD COLUMN IF NOT EXISTS miopen_v VARCHAR(64) AS (tuner_version) VIRTUAL,
  ADD COLUMN IF NOT EXISTS rocm_v VARCHAR(64) AS (LEFT(compiler_versions, 64)) VIRTUAL,
  ADD COLUMN IF NOT EXISTS reason VARCHAR(191) AS (label) VIRTUAL,
  ADD COLUMN IF NOT EXISTS insert_ts DATETIME(6) AS (created_at) VIRTUAL,
  ADD COLUMN IF NOT EXISTS valid TINYINT AS (1) VIRTUAL;

-- solver: MITuna names the solver's name column `solver`.
ALTER TABLE solver
  ADD COLUMN IF NOT EXISTS solver VARCHAR(191) CHARACTER SET ascii AS (name) VIRTUAL,
  ADD COLUMN IF NOT EXISTS config_type VARCHAR(16) CHARACTER SET ascii AS ('convolution') VIRTUAL;

-- tensor: the input (dim1..4 = C, D, H, W) and weight (dim0..4 = K, C, D, H, W) tensors of
-- every config, as MITuna's DriverConvolution composes them.
CREATE OR REPLACE ALGORITHM = TEMPTABLE VIEW tensor AS
SELECT 2 * id - 1 AS id, 0 AS dim0, in_channels AS dim1, in_d AS dim2, in_h AS dim3,
       in_w AS dim4, in_layout AS layout, spatial_dim AS num_dims,
       CAST(data_type AS CHAR) AS data_type, created_at AS insert_ts, created_at AS update_ts,
       1 AS valid
FROM conv_config
UNION ALL
SELECT 2 * id, out_channels, in_channels DIV group_count, fil_d, fil_h, fil_w, fil_layout,
       spatial_dim, CAST(data_type AS CHAR), created_at, created_at, 1
FROM conv_config;

-- MIOpen's find-db key of every config, computed as tuner_core/problem/keys.cc FindDbKey does:
-- the output size from the convolution (or transpose) arithmetic as Problem::Out computes it (padding
-- modes same / valid; an output that would be empty is clamped to 1 as MIOpen does), MIOpen's (in, out) tensor
-- roles per direction (backward data and weights put dy first, transpose mode swaps forward and
-- backward data), a single layout token when all three are NCHW/NCDHW, the _g suffix.
CREATE OR REPLACE VIEW tuna_config_sizes AS
SELECT c.*,
  IF(mode = 'trans', (in_d - 1) * conv_stride_d - 2 * pad_d + dilation_d * (fil_d - 1) + 1
                       + trans_output_pad_d,
     CASE pad_mode
       WHEN 'same' THEN CAST(CEIL(in_d / conv_stride_d) AS SIGNED)
       WHEN 'valid' THEN CAST(CEIL((in_d - fil_d + 1) / conv_stride_d) AS SIGNED)
       ELSE IF(in_d + 2 * pad_d - dilation_d * (fil_d - 1) - 1 < 0, 1,
               (in_d + 2 * pad_d - dilation_d * (fil_d - 1) - 1) DIV conv_stride_d + 1)
     END) AS out_d,
  IF(mode = 'trans', (in_h - 1) * conv_stride_h - 2 * pad_h + dilation_h * (fil_h - 1) + 1
                       + trans_output_pad_h,
     CASE pad_mode
       WHEN 'same' THEN CAST(CEIL(in_h / conv_stride_h) AS SIGNED)
       WHEN 'valid' THEN CAST(CEIL((in_h - fil_h + 1) / conv_stride_h) AS SIGNED)
       ELSE IF(in_h + 2 * pad_h - dilation_h * (fil_h - 1) - 1 < 0, 1,
               (in_h + 2 * pad_h - dilation_h * (fil_h - 1) - 1) DIV conv_stride_h + 1)
     END) AS out_h,
  IF(mode = 'trans', (in_w - 1) * conv_stride_w - 2 * pad_w + dilation_w * (fil_w - 1) + 1
                       + trans_output_pad_w,
     CASE pad_mode
       WHEN 'same' THEN CAST(CEIL(in_w / conv_stride_w) AS SIGNED)
       WHEN 'valid' THEN CAST(CEIL((in_w - fil_w + 1) / conv_stride_w) AS SIGNED)
       ELSE IF(in_w + 2 * pad_w - dilation_w * (fil_w - 1) - 1 < 0, 1,
               (in_w + 2 * pad_w - dilation_w * (fil_w - 1) - 1) DIV conv_stride_w + 1)
     END) AS out_w,
  ((mode = 'conv' AND direction IN ('B', 'W')) OR (mode = 'trans' AND direction = 'B'))
    AS dy_first,
  CASE WHEN mode = 'trans' AND direction = 'F' THEN 'B'
       WHEN mode = 'trans' AND direction = 'B' THEN 'F'
       ELSE CAST(direction AS CHAR) END AS key_direction,
  IF(spatial_dim = 3, 'NCDHW', 'NCHW') AS default_layout
FROM (SELECT id, spatial_dim, batchsize, in_channels, in_d, in_h, in_w, out_channels, fil_d,
             fil_h, fil_w, pad_d, pad_h, pad_w, conv_stride_d, conv_stride_h, conv_stride_w,
             dilation_d, dilation_h, dilation_w, trans_output_pad_d, trans_output_pad_h,
             trans_output_pad_w, group_count, mode, pad_mode, direction, data_type, in_layout,
             fil_layout, out_layout
      FROM conv_config) c;

CREATE OR REPLACE VIEW tuna_config_roles AS
SELECT id, spatial_dim, batchsize, group_count, key_direction, default_layout, fil_layout,
  CAST(data_type AS CHAR) AS data_type,
  pad_d, pad_h, pad_w, conv_stride_d, conv_stride_h, conv_stride_w, dilation_d, dilation_h,
  dilation_w, fil_d, fil_h, fil_w,
  IF(dy_first, out_channels, in_channels) AS a_c,
  IF(dy_first, out_d, in_d) AS a_d, IF(dy_first, out_h, in_h) AS a_h,
  IF(dy_first, out_w, in_w) AS a_w, IF(dy_first, out_layout, in_layout) AS a_layout,
  IF(dy_first, in_channels, out_channels) AS b_c,
  IF(dy_first, in_d, out_d) AS b_d, IF(dy_first, in_h, out_h) AS b_h,
  IF(dy_first, in_w, out_w) AS b_w, IF(dy_first, in_layout, out_layout) AS b_layout
FROM tuna_config_sizes;

CREATE OR REPLACE VIEW tuna_config_fdb_key AS
SELECT id AS config_id, CONCAT(CONCAT_WS('-',
  a_c,
  IF(spatial_dim = 3, CONCAT_WS('-', a_d, a_h, a_w), CONCAT_WS('-', a_h, a_w)),
  IF(spatial_dim = 3, CONCAT_WS('x', fil_d, fil_h, fil_w), CONCAT_WS('x', fil_h, fil_w)),
  b_c,
  IF(spatial_dim = 3, CONCAT_WS('-', b_d, b_h, b_w), CONCAT_WS('-', b_h, b_w)),
  batchsize,
  IF(spatial_dim = 3, CONCAT_WS('x', pad_d, pad_h, pad_w), CONCAT_WS('x', pad_h, pad_w)),
  IF(spatial_dim = 3, CONCAT_WS('x', conv_stride_d, conv_stride_h, conv_stride_w),
     CONCAT_WS('x', conv_stride_h, conv_stride_w)),
  IF(spatial_dim = 3, CONCAT_WS('x', dilation_d, dilation_h, dilation_w),
     CONCAT_WS('x', dilation_h, dilation_w)),
  '0',
  IF(a_layout = default_layout AND fil_layout = default_layout AND b_layout = default_layout,
     default_layout, CONCAT_WS('-', a_layout, fil_layout, b_layout)),
  -- MIOpen files INT8 problems under F as INT8INT8INT32 (tuner_core/problem/keys.cc).
  IF(data_type = 'INT8' AND key_direction = 'F', 'INT8INT8INT32', data_type), key_direction),
  IF(group_count <> 1, CONCAT('_g', group_count), '')) AS fdb_key
FROM tuna_config_roles;

-- conv_config_tags: MITuna's tag table.
CREATE OR REPLACE ALGORITHM = TEMPTABLE VIEW conv_config_tags AS
SELECT id, config_id AS config, tag, recurrent, created_at AS insert_ts, created_at AS update_ts,
       1 AS valid
FROM config_tag;

-- conv_solver_applicability: one row per (session, config, solver).
CREATE OR REPLACE ALGORITHM = TEMPTABLE VIEW conv_solver_applicability AS
SELECT ROW_NUMBER() OVER (ORDER BY session_id, config_id, solver_id) AS id,
       session_id AS session, config_id AS config, solver_id AS solver,
       CAST(applicable AS SIGNED) AS applicable, reason AS tuna_reason,
       updated_at AS insert_ts, updated_at AS update_ts, 1 AS valid
FROM solver_applicability;

-- conv_job: MITuna's job table. state in MITuna's JobEnum names (failed reads as errored,
-- cancelled as aborted); fin_step names the steps of the job's kind; reason = the job's label.
CREATE OR REPLACE ALGORITHM = TEMPTABLE VIEW conv_job AS
SELECT j.id, j.created_at AS insert_ts, j.updated_at AS update_ts, 1 AS valid,
       j.session_id AS session, j.label AS reason,
       CASE j.state WHEN 'failed' THEN 'errored' WHEN 'cancelled' THEN 'aborted'
                    ELSE CAST(j.state AS CHAR) END AS state,
       j.retries, j.error AS result, -1 AS gpu_id, -1 AS machine_id, NULL AS cache_loc,
       j.started_at AS compile_start, j.finished_at AS compile_end,
       j.started_at AS eval_start, j.finished_at AS eval_end,
       s.name AS solver, -1 AS eval_mid,
       IF(j.kind = 'perf', 'miopen_perf_compile,miopen_perf_eval',
          'miopen_find_compile,miopen_find_eval') AS fin_step,
       j.config_id AS config
FROM job j JOIN solver s ON s.id = j.solver_id;

-- conv_find_db: find results with the computed find-db key. valid = verified (only verified
-- results are exported, migration 003).
CREATE OR REPLACE ALGORITHM = TEMPTABLE VIEW conv_find_db AS
SELECT r.id, r.created_at AS insert_ts, r.updated_at AS update_ts,
       CAST(r.verified AS SIGNED) AS valid, r.session_id AS session, r.config_id AS config,
       r.solver_id AS solver, k.fdb_key, r.params, r.kernel_time, r.workspace AS workspace_sz,
       r.alg_lib, 0 AS opencl, NULL AS kernel_group
FROM find_result r JOIN tuna_config_fdb_key k ON k.config_id = r.config_id;

-- conv_perf_config / conv_perf_db: MITuna's older perf-db tables (one perf config per conv_config).
CREATE OR REPLACE ALGORITHM = TEMPTABLE VIEW conv_perf_config AS
SELECT id, id AS config, in_layout AS layout, CAST(data_type AS CHAR) AS data_type, 0 AS bias,
       1 AS valid, created_at AS insert_ts, created_at AS update_ts
FROM conv_config;

CREATE OR REPLACE ALGORITHM = TEMPTABLE VIEW conv_perf_db AS
SELECT r.id, r.created_at AS insert_ts, r.updated_at AS update_ts,
       CAST(r.verified AS SIGNED) AS valid, r.session_id AS session, r.solver_id AS solver,
       r.config_id AS miopen_config, r.params, r.kernel_time, r.workspace AS workspace_sz
FROM perf_result r;

-- conv_golden: golden find entries (migration 005) as MITuna's update_golden writes them.
CREATE OR REPLACE ALGORITHM = TEMPTABLE VIEW conv_golden AS
SELECT g.id, g.created_at AS insert_ts, g.updated_at AS update_ts, 1 AS valid,
       g.golden_v AS golden_miopen_v, g.arch, g.num_cu, g.config_id AS config,
       g.solver_id AS solver, g.session_id AS session, k.fdb_key, g.params, g.kernel_time,
       g.workspace AS workspace_sz, g.alg_lib, 0 AS opencl, NULL AS kernel_group
FROM golden_result g JOIN tuna_config_fdb_key k ON k.config_id = g.config_id
WHERE g.kind = 'find';
