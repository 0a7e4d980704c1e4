-- Invalidation of the API processes' send-context cache (src/messages/send/send-context.cache.ts): every change
-- to a phone number or a template, whoever makes it (console sync, template-status webhook in the worker, a
-- script), NOTIFYs channel `send_context` with its business account id when the transaction commits; TRUNCATE
-- notifies '*'. Identical notifications of one transaction are delivered once, so a sync of many rows costs one.
CREATE FUNCTION "notify_send_context"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('send_context', '*');
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('send_context', OLD.business_account_id::text);
  ELSE
    PERFORM pg_notify('send_context', NEW.business_account_id::text);
    IF TG_OP = 'UPDATE' AND OLD.business_account_id IS DISTINCT FROM NEW.business_account_id THEN
      PERFORM pg_notify('send_context', OLD.business_account_id::text);
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "templates_notify_send_context" AFTER INSERT OR UPDATE OR DELETE ON "templates"
  FOR EACH ROW EXECUTE FUNCTION "notify_send_context"();
CREATE TRIGGER "templates_notify_send_context_truncate" AFTER TRUNCATE ON "templates"
  FOR EACH STATEMENT EXECUTE FUNCTION "notify_send_context"();
CREATE TRIGGER "phone_numbers_notify_send_context" AFTER INSERT OR UPDATE OR DELETE ON "phone_numbers"
  FOR EACH ROW EXECUTE FUNCTION "notify_send_context"();
CREATE TRIGGER "phone_numbers_notify_send_context_truncate" AFTER TRUNCATE ON "phone_numbers"
  FOR EACH STATEMENT EXECUTE FUNCTION "notify_send_context"();
