-- The address the running server was started with (its PUBLIC_BASE_URL),
-- recorded at start beside its webhook state: the link command prints a
-- sign-in link on the address the server really serves, whatever LISTEN_ADDR
-- or PUBLIC_BASE_URL the command's own environment holds (issue 23, item 3).
-- NULL: a server older than this column recorded the row; it is written
-- again at the next start.
ALTER TABLE server_webhook ADD COLUMN public_base_url text;
