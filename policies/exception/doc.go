// Package exception evaluates gatehouse's exceptions (docs/contracts.md
// §12): the gatehouse.dev/v1alpha1 Exception and ClusterException objects
// that excuse, until they expire, chosen findings of chosen webhooks about
// chosen objects. It is pure, like every package under policies/: the
// exceptions come in as Entries (from the informer cache, or the documents
// `check` and `audit` are given), the time comes in as a value, and the
// answers are values; it counts and writes nothing.
//
// Two questions, two functions:
//
//   - Validate reviews an exception itself, on CREATE and UPDATE, against
//     the server configuration's exceptions block and the webhooks and
//     codes that exist (Rules).
//   - Index answers, per review, which exception excuses a finding:
//     NewIndex when the exceptions change, Match once per review with the
//     reviewed object, then Matches.Excuse per finding, after the members
//     have decided. Index.Statuses says, per exception, whether it was Used,
//     Unused, Expired, Disabled or Invalid, for reports.
//
// # What is excused
//
// A finding is excused when all of these hold: it is Excusable (about the
// object's content: not StateUnavailable, not a limit, not a parse failure,
// nothing reported without evidence); the reviewed object matches one entry
// of the exception's match (namespaces, kinds, names and label selector,
// each left out meaning any, all given meaning all); the reporting webhook
// is in its webhooks and the code in its codes ("*" alone meaning every
// one); and the review's time is before its expiry. Of several exceptions
// that excuse one finding, the first by key is named, so the answer does
// not depend on the order the cache lists them in.
//
// An exception names what it excuses and is named by its Key:
// "<namespace>/<name>" for an Exception, "<name>" for a ClusterException,
// client-go's cache key, so that a warning, a metric label and a report
// line name the object `kubectl get` shows. The reason is never echoed:
// it is free text, and the name leads to it.
//
// # Decisions
//
//   - An Exception applies in its own namespace only, whatever its match
//     says: an entry naming other namespaces alone matches nothing, and
//     Validate denies such an entry (ExceptionOutsideNamespace). A
//     namespace may hold Exceptions only where the configuration says so
//     (exceptions.namespaced, off by default); otherwise they excuse
//     nothing and are refused (ExceptionNamespacedDisabled).
//   - A ClusterException reaches cluster-scoped objects only through an
//     entry without namespaces: listing namespaces selects objects in them.
//   - Breadth. A ClusterException entry that narrows nothing (no
//     namespaces, kinds, names or label requirements) would excuse its
//     findings everywhere: that is an exemption, which belongs in the
//     configuration, where it is counted and rendered into the webhook
//     configurations, and Validate refuses it (ExceptionTooBroad). An
//     Exception's empty entry means its whole namespace, which is the
//     narrowing. An exception to every code of every webhook ("*" in both)
//     is a break-glass for particular objects: every match entry must
//     then name them.
//   - The reason is always required (a wildcard needs no more reason than
//     a single code has), and only blank is refused: its quality is for
//     the reviewer of the exception, who reads it.
//   - Expiry is required and bounded: after now, and within
//     exceptions.maxDuration of the CREATE or UPDATE (30 days by default).
//     Renewing is an UPDATE of spec.expires, held to the same bound. The
//     checks carry the stored value as evidence, so an UPDATE that leaves
//     an expired exception's expiry alone (removing a finalizer) is warned,
//     not denied.
//   - Expiry is judged when a review matches, not when the index is built:
//     an index built before the expiry stops excusing at it.
//   - A stored exception gatehouse would have refused still never excuses
//     more than its rules allow: an Exception's namespace bound holds at
//     matching too, and a match that cannot be evaluated (a label selector
//     that does not parse) excuses nothing (Invalid), fail closed.
//   - Labels on UPDATE are the new object's: the object judged is the one
//     that will be stored. A label selector therefore lets whoever may label
//     objects in the namespace opt them in; names are the narrower choice.
//   - Used means excused at least one finding in the period reported;
//     an exception whose objects exist but never draw a finding it names
//     is Unused, which is what a report reader needs to clean up.
//   - StateUnavailable in spec.codes is refused (ExceptionCodeNeverExcused);
//     other codes that are only ever reported without evidence (the limits)
//     are accepted when Rules.Codes lists them, and simply never excuse.
package exception
