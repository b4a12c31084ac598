-- tuna schema, version 11: when a perf job's compile step read its warm start (issue 19).
-- The compile step builds what the search will try first, including the configs the transfer
-- score ranks best; the eval step must learn that score from the same results, or it tries
-- configs nobody built while the device waits. The claim of the compile step records the time of
-- its read here, and both steps read the evaluated jobs finished by then. NULL: no bound (jobs
-- compiled before this column existed). Re-runnable: ADD COLUMN IF NOT EXISTS.

ALTER TABLE job ADD COLUMN IF NOT EXISTS transfer_horizon DATETIME(6) NULL AFTER lease_claim;
