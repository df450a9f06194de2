package exception

// The messages of Validate's findings. None quotes a value of the
// exception: the field path says which entry is meant.
const (
	msgListEmpty         = "must name at least one %s"
	msgWildcardNotAlone  = `"*" must be the only entry: it already stands for every %s`
	msgEntryEmpty        = "must not be empty"
	msgNamespaceInvalid  = "must be a namespace name"
	msgSelectorInvalid   = "is not a valid label selector: %s"
	msgReasonMissing     = "an exception needs a reason: say why it exists, who owns it and how it ends (a ticket, a plan to fix)"
	msgExpired           = "the expiry has passed (or is missing): an expired exception excuses nothing; set spec.expires to a time within %s from now, or delete the exception"
	msgExpiryTooFar      = "the expiry is more than %s from now (the configuration's exceptions.maxDuration); set an earlier spec.expires, and renew the exception near its end if it is still needed"
	msgNamespacedOff     = "this gatehouse honours ClusterExceptions only (its configuration's exceptions.namespaced is off), so this Exception would excuse nothing; ask a cluster admin for a ClusterException, or to turn exceptions.namespaced on"
	msgOutsideNamespace  = "an Exception excuses only objects of its own namespace; leave namespaces out (it then means its own), or ask a cluster admin for a ClusterException"
	msgSelectsEverything = "selects every object of the cluster; narrow it by namespaces, kinds, names or labelSelector (to stop judging requests altogether, use the configuration's exemptions)"
	msgEverythingNamed   = `webhooks and codes are both "*", so this entry must name its objects: add names, or name the webhooks or the codes excused`
	msgUnknownWebhook    = "names no webhook of this gatehouse whose findings can be excused, so it would excuse nothing; use a validating webhook's registry name (as in the configuration's webhooks; the denials of mutating webhooks, of harness-labels-guard and of the exception webhook are never excused), or \"*\""
	msgUnknownCode       = "names no code a webhook of this gatehouse reports, so it would excuse nothing; use a code as denials print it, or \"*\""
	msgCodeNeverExcused  = "this code is about gatehouse's view of the cluster, not about the object, and is never excused"
)
