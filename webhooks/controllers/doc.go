// Package controllers holds the reconcilers `gatehouse serve` runs beside
// its webhooks, leader-elected, for what admission alone cannot decide (two
// objects admitted at once on different replicas). Each reconciler reads the
// policy that decides (policies/...) and writes status; none serves
// admission. ModeDrift, which every replica runs, only reads: the
// registered webhook configurations, against the server's modes.
package controllers
