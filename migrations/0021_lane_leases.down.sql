DROP TABLE lane_leases;
