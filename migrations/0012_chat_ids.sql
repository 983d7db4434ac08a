-- 0012 chat_ids
-- One spelling per chat (issue 23 item 4, src/delivery/chat-id.ts): registrations stored before
-- it keep whatever spelling was signed. Numeric ids become their plain decimal form (leading zeros
-- and a '+' dropped) and @usernames lower case, the forms the registration endpoint now stores.
-- An id of neither shape is left as it is: the platform accepted a test message to it, and
-- deleting a working registration would silently stop a paying wallet's pushes.
UPDATE delivery_registrations SET chat_id = CAST(CAST(chat_id AS INTEGER) AS TEXT)
  WHERE ((chat_id GLOB '[0-9]*' AND chat_id NOT GLOB '*[^0-9]*')
      OR (chat_id GLOB '[+-][0-9]*' AND substr(chat_id, 2) NOT GLOB '*[^0-9]*'))
    AND CAST(chat_id AS INTEGER) BETWEEN -9007199254740991 AND 9007199254740991
    AND CAST(chat_id AS INTEGER) <> 0
    AND chat_id <> CAST(CAST(chat_id AS INTEGER) AS TEXT);
UPDATE delivery_registrations SET chat_id = lower(chat_id) WHERE chat_id GLOB '@*' AND chat_id <> lower(chat_id);
