package webhooks

// DecisionExempt is the decision of a member on an exempt request
// (route.Options.Exempt decides which are).
const DecisionExempt = "exempt"
