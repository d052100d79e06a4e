package metrics

import (
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// Pool is what the pool collector reads of a connection pool: a
// *pgxpool.Pool.
type Pool interface {
	Stat() *pgxpool.Stat
}

// poolStat is one figure of pgxpool.Stat as a metric.
type poolStat struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(*pgxpool.Stat) float64
}

// pools reads each pool's Stat at scrape time: the figures are pgxpool's
// own counters, so nothing is counted twice and nothing runs between
// scrapes.
type pools struct {
	names []string
	pools map[string]Pool
	stats []poolStat
}

// NewPools is a collector of the pools by name (the server's "pages" and
// "lanes", store.Pools), each figure labelled pool="<name>".
func NewPools(byName map[string]Pool) prometheus.Collector {
	p := &pools{pools: byName, stats: poolStats()}
	for name := range byName {
		p.names = append(p.names, name)
	}
	slices.Sort(p.names)
	return p
}

func poolStats() []poolStat {
	gauge := func(name, help string, v func(*pgxpool.Stat) int32) poolStat {
		return poolStat{poolDesc(name, help), prometheus.GaugeValue, func(s *pgxpool.Stat) float64 { return float64(v(s)) }}
	}
	counter := func(name, help string, v func(*pgxpool.Stat) float64) poolStat {
		return poolStat{poolDesc(name, help), prometheus.CounterValue, v}
	}
	return []poolStat{
		gauge("acquired_connections", "Connections in use.", (*pgxpool.Stat).AcquiredConns),
		gauge("idle_connections", "Connections open and idle.", (*pgxpool.Stat).IdleConns),
		gauge("constructing_connections", "Connections being opened.", (*pgxpool.Stat).ConstructingConns),
		gauge("total_connections", "Connections open or being opened.", (*pgxpool.Stat).TotalConns),
		gauge("max_connections", "The most connections the pool opens (DATABASE_POOL_SIZE, DATABASE_LANE_POOL_SIZE).", (*pgxpool.Stat).MaxConns),
		counter("acquires_total", "Connections taken from the pool.", func(s *pgxpool.Stat) float64 { return float64(s.AcquireCount()) }),
		counter("acquire_seconds_total", "Time spent taking connections from the pool.", func(s *pgxpool.Stat) float64 { return s.AcquireDuration().Seconds() }),
		counter("canceled_acquires_total", "Takes given up because their context ended first.", func(s *pgxpool.Stat) float64 { return float64(s.CanceledAcquireCount()) }),
		counter("empty_acquires_total", "Takes that found no idle connection and waited for one.", func(s *pgxpool.Stat) float64 { return float64(s.EmptyAcquireCount()) }),
		counter("empty_acquire_wait_seconds_total", "Time the takes that found no idle connection waited.", func(s *pgxpool.Stat) float64 { return s.EmptyAcquireWaitTime().Seconds() }),
		counter("new_connections_total", "Connections opened.", func(s *pgxpool.Stat) float64 { return float64(s.NewConnsCount()) }),
		counter("max_lifetime_destroys_total", "Connections closed for their age.", func(s *pgxpool.Stat) float64 { return float64(s.MaxLifetimeDestroyCount()) }),
		counter("max_idle_destroys_total", "Connections closed for idling too long.", func(s *pgxpool.Stat) float64 { return float64(s.MaxIdleDestroyCount()) }),
	}
}

func poolDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, "db_pool", name), help, []string{"pool"}, nil)
}

func (p *pools) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range p.stats {
		ch <- s.desc
	}
}

func (p *pools) Collect(ch chan<- prometheus.Metric) {
	for _, name := range p.names {
		st := p.pools[name].Stat()
		for _, s := range p.stats {
			ch <- prometheus.MustNewConstMetric(s.desc, s.kind, s.value(st), name)
		}
	}
}
