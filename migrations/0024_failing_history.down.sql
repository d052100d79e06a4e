DROP TABLE failing_history;
