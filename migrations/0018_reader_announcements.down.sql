DROP TABLE announcements;
DROP TABLE push_subscriptions;
DROP TABLE reader_settings;
