-- Nothing to undo: a cleared request read as served under the old rule too.
SELECT 1;
