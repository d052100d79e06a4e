DROP INDEX IF EXISTS poll_failures_unfetchable;
