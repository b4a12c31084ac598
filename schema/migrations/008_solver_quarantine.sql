-- tuna schema, version 8: quarantine per (config, solver), with a reason (issue 15 part 5).
-- A job whose step crashed or hung its executor counts against its (session, config, solver):
-- one solver's bad kernel no longer quarantines every solver of the config. `reason` says what
-- counted ("executor_killed"); successes of the same (config, solver) decay `kills` by one each
-- while it is not quarantined. Rows from version 4 (per config) keep solver_id 0.
-- Re-runnable: ADD COLUMN / INDEX IF NOT EXISTS; a second run replaces the key with the same one.

ALTER TABLE config_quarantine
  ADD COLUMN IF NOT EXISTS solver_id BIGINT NOT NULL DEFAULT 0 AFTER config_id,
  ADD COLUMN IF NOT EXISTS reason VARCHAR(64) NOT NULL DEFAULT 'executor_killed' AFTER kills;

-- The config foreign key needs an index of its own once the primary key changes.
CREATE INDEX IF NOT EXISTS idx_quarantine_config ON config_quarantine (config_id);

ALTER TABLE config_quarantine DROP PRIMARY KEY, ADD PRIMARY KEY (session_id, config_id, solver_id);
