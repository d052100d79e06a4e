-- Lane leadership is a lease row (ADR 0018): a Lane is led by the holder
-- named here until expires_at, which the holder renews while it lives. A
-- holder that vanished (a host suspended, a network cut the database never
-- noticed) stops renewing, and the Lane is free at expires_at. A released
-- lease keeps its row with expires_at at the release, so how long nobody
-- has led a Lane stays readable (the Lanes page, the stall condition).
CREATE TABLE lane_leases (
    site       text PRIMARY KEY,
    holder     text NOT NULL,
    expires_at timestamptz NOT NULL,
    -- The holder's pace for the Lane (POLL_EVERY): a Lane nobody has led
    -- for longer than this is named on the Lanes page.
    pace_s     integer NOT NULL DEFAULT 0
);
