-- tuna schema, version 10: which claim leased a job (issue 15, "nothing lost").
-- A claim transaction whose COMMIT went out but whose answer was lost (the server killed or the
-- connection cut at that moment) may have committed: the lease store tags every claim's jobs with
-- a token and, once the database answers again, hands back the jobs of such a claim that no
-- worker was given (otherwise they would sit leased to a worker that never heard of them until
-- the lease ran out: 30 minutes under `tuna tune -f`). Re-runnable: ADD COLUMN IF NOT EXISTS.

ALTER TABLE job ADD COLUMN IF NOT EXISTS lease_claim BIGINT NULL AFTER lease_expires_at;
