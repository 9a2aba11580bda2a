// Package unified holds the matching engine of the MongoDB unified test
// format: it decides whether an actual BSON value (a command, a reply, an
// operation's result, a log message's data) matches an expected value
// written in a spec test file, with the format's special operators
// ($$exists, $$type, $$unsetOrMatches, $$matchesEntity, $$matchesHexBytes,
// $$sessionLsid, $$lte, $$matchAsDocument, $$matchAsRoot), flexible numeric
// comparison and the root-versus-nested rule for extra fields. A mismatch is
// a *MismatchError naming the path of the first value that differs; a
// malformed expectation (an unknown operator, bad hex, an undefined entity)
// is an *InvalidTestError. MatchError applies an expectedError object to an
// error's observable parts.
//
// What is not here yet: the runner itself (entity creation, operations,
// event and log collection, runOnRequirements). The partial runners in
// driver/*_spec_test.go still carry their own matchers; they can switch to
// Match by converting their values to BSON (ParseValue reads Extended JSON).
package unified
