DROP TABLE freshness_figure;
