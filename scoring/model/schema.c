/*
 * schema.c - the tables scoring/model owns: the as-of history summaries
 * of histsum.c (hist_files, hist_author_tops, hist_reviewers,
 * hist_authors, hist_components, hist_state); and the owners of the
 * whole scoring library, the list a program that links only
 * libpt_scoring.a opens its database with.
 */
#include "scoring/model/schema.h"

#include "scoring/history/schema.h"
#include "scoring/lists/schema.h"

static const struct db_step model_steps[] = {
	/* 11: as-of history summaries, for a mail */
	{ 11,
	  "CREATE TABLE hist_files ("
	  " repo_id INTEGER NOT NULL, path TEXT NOT NULL, n INTEGER NOT NULL,"
	  " rows BLOB NOT NULL, PRIMARY KEY (repo_id, path));"
	  "CREATE TABLE hist_author_tops ("
	  " repo_id INTEGER NOT NULL, author_id INTEGER NOT NULL,"
	  " top TEXT NOT NULL, n INTEGER NOT NULL, rows BLOB NOT NULL,"
	  " PRIMARY KEY (repo_id, author_id, top));"
	  "CREATE TABLE hist_reviewers ("
	  " repo_id INTEGER NOT NULL, person_id INTEGER NOT NULL,"
	  " n INTEGER NOT NULL, rows BLOB NOT NULL,"
	  " PRIMARY KEY (repo_id, person_id));"
	  "CREATE TABLE hist_state ("
	  " repo_id INTEGER PRIMARY KEY, tip TEXT, mined_at INTEGER,"
	  " format INTEGER NOT NULL);" },
	/* 12: an author's and a component's past bugs */
	{ 12, "CREATE TABLE hist_authors ("
	      " repo_id INTEGER NOT NULL, author_id INTEGER NOT NULL,"
	      " n INTEGER NOT NULL, rows BLOB NOT NULL,"
	      " PRIMARY KEY (repo_id, author_id));"
	      "CREATE TABLE hist_components ("
	      " repo_id INTEGER NOT NULL, component TEXT NOT NULL,"
	      " n INTEGER NOT NULL, rows BLOB NOT NULL,"
	      " PRIMARY KEY (repo_id, component));" },
};

const struct db_schema model_schema = {
	"scoring/model",
	model_steps,
	sizeof(model_steps) / sizeof(model_steps[0]),
};

/* Within one version: model's, then lists', then history's (schema.h). */
static const struct db_schema *const scoring_schemas[] = {
	&model_schema,
	&lists_schema,
	&history_schema,
};

const struct db_owners scoring_db_owners = {
	scoring_schemas,
	sizeof(scoring_schemas) / sizeof(scoring_schemas[0]),
	NULL,
};
