-- tuna schema, version 1 (DESIGN.md §4). InnoDB, utf8mb4.
-- MariaDB commits DDL implicitly, so a migration cannot be rolled back as a whole: every
-- statement here is written to be re-runnable (IF NOT EXISTS) so that a migration interrupted
-- half way can simply be run again.
-- Conventions: BIGINT ids, DATETIME(6) timestamps in UTC (the store sets time_zone = '+00:00'),
-- DOUBLE times in milliseconds, LONGBLOB blobs, ASCII for hashes and solver parameter strings.
-- The first text of this migration, applied to databases before find_result was written as
-- LIKE perf_result (same schema; schema/migrate/migrate.h, "recorded rewrites"):
-- tuna:replaces-checksum 31d91fc4c5c3b5e6b5a6928a11022836a2dd0022e6fc979d6cac12fdd94249bc

-- One normalized convolution problem (one direction). Columns are tuna::Problem's fields in
-- MIOpenDriver/MITuna terms; `driver` is the canonical MIOpenDriver line and `config_hash` the
-- SHA-256 (hex) of it: the dedup key.
CREATE TABLE IF NOT EXISTS conv_config (
  id BIGINT NOT NULL AUTO_INCREMENT,
  spatial_dim TINYINT NOT NULL,
  batchsize BIGINT NOT NULL,
  in_channels BIGINT NOT NULL,
  in_d BIGINT NOT NULL DEFAULT 1,
  in_h BIGINT NOT NULL,
  in_w BIGINT NOT NULL,
  out_channels BIGINT NOT NULL,
  fil_d INT NOT NULL DEFAULT 1,
  fil_h INT NOT NULL,
  fil_w INT NOT NULL,
  pad_d INT NOT NULL DEFAULT 0,
  pad_h INT NOT NULL,
  pad_w INT NOT NULL,
  conv_stride_d INT NOT NULL DEFAULT 1,
  conv_stride_h INT NOT NULL,
  conv_stride_w INT NOT NULL,
  dilation_d INT NOT NULL DEFAULT 1,
  dilation_h INT NOT NULL,
  dilation_w INT NOT NULL,
  trans_output_pad_d INT NOT NULL DEFAULT 0,
  trans_output_pad_h INT NOT NULL DEFAULT 0,
  trans_output_pad_w INT NOT NULL DEFAULT 0,
  group_count INT NOT NULL DEFAULT 1,
  mode ENUM('conv', 'trans') NOT NULL DEFAULT 'conv',
  direction ENUM('F', 'B', 'W') NOT NULL,
  data_type ENUM('FP32', 'FP16', 'BF16', 'INT8') NOT NULL,
  in_layout VARCHAR(8) CHARACTER SET ascii NOT NULL DEFAULT 'NCHW',
  fil_layout VARCHAR(8) CHARACTER SET ascii NOT NULL DEFAULT 'NCHW',
  out_layout VARCHAR(8) CHARACTER SET ascii NOT NULL DEFAULT 'NCHW',
  driver VARCHAR(1024) NOT NULL,
  config_hash CHAR(64) CHARACTER SET ascii NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id),
  UNIQUE KEY uk_conv_config_hash (config_hash),
  KEY idx_conv_config_shape (data_type, direction, spatial_dim)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- Import tags: which configs a model/workload contributed (MITuna's tag + recurrent flag).
CREATE TABLE IF NOT EXISTS config_tag (
  id BIGINT NOT NULL AUTO_INCREMENT,
  config_id BIGINT NOT NULL,
  tag VARCHAR(191) NOT NULL,
  recurrent BOOLEAN NOT NULL DEFAULT FALSE,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id),
  UNIQUE KEY uk_config_tag (config_id, tag),
  KEY idx_config_tag_tag (tag),
  CONSTRAINT fk_config_tag_config FOREIGN KEY (config_id) REFERENCES conv_config (id)
    ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- The solver registry as written by `tuna solvers update`: ids are the registry's stable ids.
CREATE TABLE IF NOT EXISTS solver (
  id INT NOT NULL,
  name VARCHAR(191) CHARACTER SET ascii NOT NULL,
  tunable BOOLEAN NOT NULL DEFAULT FALSE,
  directions VARCHAR(8) CHARACTER SET ascii NOT NULL DEFAULT 'FBW',
  is_dynamic BOOLEAN NOT NULL DEFAULT FALSE,
  valid BOOLEAN NOT NULL DEFAULT TRUE,
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id),
  UNIQUE KEY uk_solver_name (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- One tuning campaign for one target.
CREATE TABLE IF NOT EXISTS session (
  id BIGINT NOT NULL AUTO_INCREMENT,
  arch VARCHAR(64) CHARACTER SET ascii NOT NULL,
  num_cu INT NOT NULL,
  backend ENUM('HIP', 'CUDA', 'CPU') NOT NULL,
  tuner_version VARCHAR(64) NOT NULL DEFAULT '',
  compiler_versions VARCHAR(1024) NOT NULL DEFAULT '',
  label VARCHAR(191) NOT NULL DEFAULT '',
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id),
  KEY idx_session_target (arch, num_cu, backend)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- Whether a solver can run a config on the session's target, with the reason when not.
CREATE TABLE IF NOT EXISTS solver_applicability (
  session_id BIGINT NOT NULL,
  config_id BIGINT NOT NULL,
  solver_id INT NOT NULL,
  applicable BOOLEAN NOT NULL,
  reason VARCHAR(1024) NOT NULL DEFAULT '',
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  PRIMARY KEY (session_id, config_id, solver_id),
  KEY idx_applicability_config (config_id),
  KEY idx_applicability_solver (solver_id),
  CONSTRAINT fk_applicability_session FOREIGN KEY (session_id) REFERENCES session (id)
    ON DELETE CASCADE,
  CONSTRAINT fk_applicability_config FOREIGN KEY (config_id) REFERENCES conv_config (id)
    ON DELETE CASCADE,
  CONSTRAINT fk_applicability_solver FOREIGN KEY (solver_id) REFERENCES solver (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- The work queue (DESIGN §3). One row per (session, config, solver, kind); `attempt` and
-- `lease_owner` fence reports; `retries` counts expired/failed leases.
CREATE TABLE IF NOT EXISTS job (
  id BIGINT NOT NULL AUTO_INCREMENT,
  session_id BIGINT NOT NULL,
  config_id BIGINT NOT NULL,
  solver_id INT NOT NULL,
  kind ENUM('perf', 'find') NOT NULL,
  state ENUM('new', 'compile_start', 'compiled', 'eval_start', 'evaluated', 'errored', 'failed',
             'not_applicable', 'cancelled') NOT NULL DEFAULT 'new',
  retries INT NOT NULL DEFAULT 0,
  attempt INT NOT NULL DEFAULT 0,
  lease_owner VARCHAR(191) NULL,
  lease_expires_at DATETIME(6) NULL,
  priority INT NOT NULL DEFAULT 0,
  label VARCHAR(191) NOT NULL DEFAULT '',
  error TEXT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  started_at DATETIME(6) NULL,
  finished_at DATETIME(6) NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_job (session_id, config_id, solver_id, kind),
  -- Lease: WHERE state = ? AND session_id IN (...) ORDER BY priority, retries, id ... SKIP LOCKED
  KEY idx_job_lease (state, session_id, priority, retries, id),
  -- Reaper: expired leases of in-progress states.
  KEY idx_job_expiry (state, lease_expires_at),
  KEY idx_job_config (config_id),
  KEY idx_job_solver (solver_id),
  CONSTRAINT fk_job_session FOREIGN KEY (session_id) REFERENCES session (id) ON DELETE CASCADE,
  CONSTRAINT fk_job_config FOREIGN KEY (config_id) REFERENCES conv_config (id) ON DELETE CASCADE,
  CONSTRAINT fk_job_solver FOREIGN KEY (solver_id) REFERENCES solver (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- Compiled code objects (zstd-compressed), deduplicated by content hash.
CREATE TABLE IF NOT EXISTS kernel (
  id BIGINT NOT NULL AUTO_INCREMENT,
  hash CHAR(64) CHARACTER SET ascii NOT NULL,
  arch VARCHAR(64) CHARACTER SET ascii NOT NULL,
  compiler VARCHAR(191) NOT NULL DEFAULT '',
  kernel_name VARCHAR(255) NOT NULL,
  options TEXT NOT NULL,
  `blob` LONGBLOB NOT NULL,
  uncompressed_size BIGINT NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id),
  UNIQUE KEY uk_kernel_hash (hash),
  KEY idx_kernel_arch (arch)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- Which kernels a job's compile step produced (its eval step loads them).
CREATE TABLE IF NOT EXISTS job_kernel (
  job_id BIGINT NOT NULL,
  kernel_id BIGINT NOT NULL,
  PRIMARY KEY (job_id, kernel_id),
  KEY idx_job_kernel_kernel (kernel_id),
  CONSTRAINT fk_job_kernel_job FOREIGN KEY (job_id) REFERENCES job (id) ON DELETE CASCADE,
  CONSTRAINT fk_job_kernel_kernel FOREIGN KEY (kernel_id) REFERENCES kernel (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- Tuning winner per (session, config, solver): the perf-db row. kernel_time in ms.
CREATE TABLE IF NOT EXISTS perf_result (
  id BIGINT NOT NULL AUTO_INCREMENT,
  session_id BIGINT NOT NULL,
  config_id BIGINT NOT NULL,
  solver_id INT NOT NULL,
  job_id BIGINT NULL,
  params VARCHAR(1024) CHARACTER SET ascii NOT NULL,
  kernel_time DOUBLE NOT NULL,
  workspace BIGINT NOT NULL DEFAULT 0,
  candidates_tried INT NOT NULL DEFAULT 0,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id),
  UNIQUE KEY uk_perf_result (session_id, config_id, solver_id),
  KEY idx_perf_result_config (config_id),
  CONSTRAINT fk_perf_result_session FOREIGN KEY (session_id) REFERENCES session (id)
    ON DELETE CASCADE,
  CONSTRAINT fk_perf_result_config FOREIGN KEY (config_id) REFERENCES conv_config (id)
    ON DELETE CASCADE,
  CONSTRAINT fk_perf_result_solver FOREIGN KEY (solver_id) REFERENCES solver (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- Find-db entry per (session, config, solver): time at the best/default parameters, in ms.
-- perf_result's shape without candidates_tried, params (empty by default) after workspace, keys
-- and constraints named for this table (LIKE copies neither foreign keys nor names that fit).
-- This text replaced the first one, which spelled the same table out column by column (the
-- schema is the same: tests/schema/migrate_test.cc compares both).
CREATE TABLE IF NOT EXISTS find_result LIKE perf_result;
ALTER TABLE find_result
  DROP COLUMN IF EXISTS candidates_tried,
  MODIFY params VARCHAR(1024) CHARACTER SET ascii NOT NULL DEFAULT '' AFTER workspace,
  DROP INDEX IF EXISTS uk_perf_result,
  ADD UNIQUE KEY IF NOT EXISTS uk_find_result (session_id, config_id, solver_id),
  DROP INDEX IF EXISTS idx_perf_result_config,
  ADD KEY IF NOT EXISTS idx_find_result_config (config_id),
  ADD CONSTRAINT fk_find_result_session FOREIGN KEY IF NOT EXISTS (session_id)
    REFERENCES session (id) ON DELETE CASCADE,
  ADD CONSTRAINT fk_find_result_config FOREIGN KEY IF NOT EXISTS (config_id)
    REFERENCES conv_config (id) ON DELETE CASCADE,
  ADD CONSTRAINT fk_find_result_solver FOREIGN KEY IF NOT EXISTS (solver_id)
    REFERENCES solver (id);

-- Every candidate timed by an eval step (search models, audits). `time` in ms, NULL when the
-- candidate did not run; status: Passed, CompileFailed, LaunchFailed, Incorrect, Timeout, ...
-- Unique per (job, attempt, params) so a duplicate report is a no-op.
CREATE TABLE IF NOT EXISTS eval_sample (
  id BIGINT NOT NULL AUTO_INCREMENT,
  job_id BIGINT NOT NULL,
  attempt INT NOT NULL DEFAULT 0,
  params VARCHAR(1024) CHARACTER SET ascii NOT NULL,
  time DOUBLE NULL,
  status VARCHAR(32) CHARACTER SET ascii NOT NULL,
  error TEXT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id),
  UNIQUE KEY uk_eval_sample (job_id, attempt, params),
  CONSTRAINT fk_eval_sample_job FOREIGN KEY (job_id) REFERENCES job (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- GPU workers (one row per host + device) as registered with a coordinator.
CREATE TABLE IF NOT EXISTS worker (
  id BIGINT NOT NULL AUTO_INCREMENT,
  host VARCHAR(191) NOT NULL,
  device_index INT NOT NULL,
  arch VARCHAR(64) CHARACTER SET ascii NOT NULL,
  num_cu INT NOT NULL,
  backend ENUM('HIP', 'CUDA', 'CPU') NOT NULL,
  version VARCHAR(64) NOT NULL DEFAULT '',
  state ENUM('idle', 'busy', 'offline', 'quarantined') NOT NULL DEFAULT 'idle',
  registered_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  last_seen DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id),
  UNIQUE KEY uk_worker_device (host, device_index),
  KEY idx_worker_last_seen (last_seen)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
