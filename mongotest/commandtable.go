package mongotest

// commands is every built-in command, in one place: the name as sent (names
// are case-sensitive, as in mongod, so each alias and legacy spelling has
// its own row), the handler, and the flags that say when it may run
// (cmdNoAuth, cmdAdminOnly) and how the server treats it (cmdSensitive,
// cmdHello). Server.Handle overrides a row for one server and keeps its
// flags. The table is only read.
var commands = map[string]command{
	// Handshake and topology (topology.go, replset_commands.go).
	"hello":            {helloCmd, cmdNoAuth | cmdHello},
	"isMaster":         {helloCmd, cmdNoAuth | cmdHello},
	"ismaster":         {helloCmd, cmdNoAuth | cmdHello},
	"replSetStepDown":  {replSetStepDownCmd, cmdAdminOnly | cmdMongodOnly},
	"replSetFreeze":    {replSetFreezeCmd, cmdAdminOnly | cmdMongodOnly},
	"replSetGetStatus": {replSetGetStatusCmd, cmdAdminOnly | cmdMongodOnly},

	// mongos only (sharded.go).
	"isdbgrid":   {isdbgridCmd, cmdMongosOnly},
	"listShards": {listShardsCmd, cmdAdminOnly | cmdMongosOnly},

	// Authentication (scram.go).
	"saslStart":        {saslStartCmd, cmdNoAuth | cmdSensitive},
	"saslContinue":     {saslContinueCmd, cmdNoAuth | cmdSensitive},
	"authenticate":     {authenticateCmd, cmdNoAuth | cmdSensitive},
	"logout":           {logoutCmd, cmdNoAuth},
	"connectionStatus": {connectionStatusCmd, cmdNoAuth},

	// Administration and sessions (admin.go).
	"ping":            {pingCmd, cmdNoAuth},
	"buildInfo":       {buildInfoCmd, cmdNoAuth},
	"buildinfo":       {buildInfoCmd, cmdNoAuth}, // mongod's alias
	"serverStatus":    {serverStatusCmd, 0},
	"endSessions":     {endSessionsCmd, cmdNoAuth},
	"killAllSessions": {noopCmd, 0},
	"refreshSessions": {refreshSessionsCmd, cmdNoAuth},

	// Transactions are not supported; the commands exist so that fail
	// points on them fire, as on mongod (transactions.go).
	"commitTransaction": {transactionCmd, cmdAdminOnly},
	"abortTransaction":  {transactionCmd, cmdAdminOnly},
	"whatsmyuri":        {whatsmyuriCmd, cmdNoAuth},

	// Fail points (failpoint.go).
	"configureFailPoint": {configureFailPointCmd, cmdAdminOnly},

	// Reads (find.go, aggregate.go) and cursors (cursors.go).
	"find":        {findCmd, 0},
	"count":       {countCmd, 0},
	"distinct":    {distinctCmd, 0},
	"aggregate":   {aggregateCmd, 0},
	"mapReduce":   {mapReduceCmd, 0},
	"getMore":     {getMoreCmd, 0},
	"killCursors": {killCursorsCmd, 0},

	// Writes (write.go, findandmodify.go).
	"insert":        {insertCmd, 0},
	"update":        {updateCmd, 0},
	"delete":        {deleteCmd, 0},
	"bulkWrite":     {bulkWriteCmd, cmdAdminOnly},
	"findAndModify": {findAndModifyCmd, 0},
	"findandmodify": {findAndModifyCmd, 0}, // mongod's alias

	// Catalog (catalog.go).
	"listDatabases":    {listDatabasesCmd, cmdAdminOnly},
	"listCollections":  {listCollectionsCmd, 0},
	"listIndexes":      {listIndexesCmd, 0},
	"createIndexes":    {createIndexesCmd, 0},
	"dropIndexes":      {dropIndexesCmd, 0},
	"deleteIndexes":    {dropIndexesCmd, 0}, // mongod's alias
	"create":           {createCmd, 0},
	"drop":             {dropCmd, 0},
	"dropDatabase":     {dropDatabaseCmd, 0},
	"renameCollection": {renameCollectionCmd, cmdAdminOnly},
	"collMod":          {collModCmd, 0},

	// Test harness commands (harness.go) and user management (users.go).
	"getParameter":             {getParameterCmd, cmdAdminOnly},
	"setParameter":             {setParameterCmd, cmdAdminOnly},
	"listCommands":             {listCommandsCmd, cmdNoAuth},
	"hostInfo":                 {hostInfoCmd, 0},
	"getCmdLineOpts":           {getCmdLineOptsCmd, cmdAdminOnly},
	"getLog":                   {getLogCmd, cmdAdminOnly},
	"dbStats":                  {dbStatsCmd, 0},
	"dbstats":                  {dbStatsCmd, 0}, // mongod's alias
	"collStats":                {collStatsCmd, 0},
	"collstats":                {collStatsCmd, 0}, // mongod's alias
	"createSearchIndexes":      {searchIndexCmd, 0},
	"updateSearchIndex":        {searchIndexCmd, 0},
	"dropSearchIndex":          {searchIndexCmd, 0},
	"createUser":               {createUserCmd, cmdSensitive},
	"updateUser":               {updateUserCmd, cmdSensitive},
	"dropUser":                 {dropUserCmd, 0},
	"dropAllUsersFromDatabase": {dropAllUsersFromDatabaseCmd, 0},
	"usersInfo":                {usersInfoCmd, 0},
}

// aliasOf maps each alias in the table to the name its command is
// registered under. In mongod an alias is the same Command object as its
// name, so the two are one command wherever mongod looks a command up:
// listCommands lists only the name, and a failCommand fail point naming
// either fires for both (Command::hasAlias in src/mongo/db/commands.cpp).
// hello is not here: mongod registers hello, and isMaster with its alias
// ismaster, as two commands (src/mongo/db/repl/replication_info.cpp), so
// a fail point on hello does not fail isMaster, nor the reverse.
var aliasOf = map[string]string{
	"ismaster":      "isMaster",
	"buildinfo":     "buildInfo",
	"findandmodify": "findAndModify",
	"deleteIndexes": "dropIndexes",
	"dbstats":       "dbStats",
	"collstats":     "collStats",
}

// commandAliases is the set of aliasOf's keys.
var commandAliases = func() map[string]bool {
	m := make(map[string]bool, len(aliasOf))
	for a := range aliasOf {
		m[a] = true
	}
	return m
}()

// commandName is the name the command sent as name is registered under:
// name itself unless it is an alias. Names are case-sensitive, as in
// mongod, so "ISMASTER" is no alias.
func commandName(name string) string {
	if n, ok := aliasOf[name]; ok {
		return n
	}
	return name
}
