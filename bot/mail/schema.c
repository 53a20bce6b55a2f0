/*
 * schema.c - the table bot/mail owns: imap_folders, each folder's
 * UIDVALIDITY and last UID seen (imap_sync.c; bot/loop/status.c reads
 * it).
 */
#include "bot/mail/schema.h"

static const struct db_step mail_steps[] = {
	/* 3: the IMAP folders' UIDVALIDITY and last UID */
	{ 3, "CREATE TABLE imap_folders ("
	     " account TEXT NOT NULL, folder TEXT NOT NULL,"
	     " uidvalidity INTEGER NOT NULL, last_uid INTEGER NOT NULL,"
	     " updated INTEGER NOT NULL, PRIMARY KEY (account, folder));" },
};

const struct db_schema mail_schema = {
	"bot/mail",
	mail_steps,
	sizeof(mail_steps) / sizeof(mail_steps[0]),
};
