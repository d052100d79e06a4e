DROP TABLE removed_series;
