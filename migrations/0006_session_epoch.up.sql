-- Signing out ends every session of the Reader: a session cookie carries the
-- epoch it was issued under, and sign-out moves the epoch on, so a copied
-- cookie stops working at once instead of living out its thirty days.
ALTER TABLE readers ADD COLUMN session_epoch bigint NOT NULL DEFAULT 0;
