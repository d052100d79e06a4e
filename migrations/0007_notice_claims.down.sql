DROP TABLE IF EXISTS owner_notice_claims;
