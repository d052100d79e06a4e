package store

// RefreshFreshnessSQL is the Lanes' refresh of the landing's freshness figure.
var RefreshFreshnessSQL = refreshFreshnessSQL
