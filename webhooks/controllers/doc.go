// Package controllers holds the reconcilers `gatehouse serve` runs beside
// its webhooks, leader-elected, for what admission alone cannot decide (two
// objects admitted at once on different replicas), and the background audit
// (Audit), which `serve --role=audit` runs alone, never beside the webhooks.
// Each reconciler reads the policy that decides (policies/...) and writes
// status; none serves admission, so this package imports no webhook adapter.
// ModeDrift, which every serving replica runs, only reads: the registered
// webhook configurations, against the server's modes. WebhookConfigurations
// (serve --manage-webhook-configurations, the chart's) writes them: the
// entries the server's configuration renders.
package controllers
