-- The Sites the running server reads through the browser sidecar
-- (BROWSER_SITES as it parsed it), recorded at start beside its webhook
-- state: the owner-notice conditions depend on them (a browser Site has no
-- no-browser-route; sidecar-down reads the browser Lanes), so the notices
-- command derives them with the server's set, never its own environment's.
-- NULL: a server older than this column recorded the row; it is written again
-- at the next start.
ALTER TABLE server_webhook ADD COLUMN browser_sites text[];
