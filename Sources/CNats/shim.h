#ifndef CNATS_SHIM_H
#define CNATS_SHIM_H
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// The JetStream calls Canopy's cluster mode makes, with flat arguments: the option structs are filled here, in C,
/// rather than field by field from Swift.

/// Connects to any of `servers` (`count` URLs), reconnecting forever with a 250 ms wait, under connection name `name`.
/// The server is pinged every `pingIntervalMillis`; once `maxPingsOut` pings are unanswered the connection counts as
/// stale and nats.c reconnects to another server, so a stalled server (alive to TCP, answering nothing) is left as
/// soon as a dead one would be. `disconnected` and `reconnected` are called with `closure` (on nats.c's thread) when
/// the connection is lost and when it is made again, `failed` when a subscription drops messages (a slow consumer).
static inline natsStatus canopy_nats_connect(natsConnection **connection, const char **servers, int count,
                                             const char *name, int64_t pingIntervalMillis, int maxPingsOut,
                                             natsConnectionHandler disconnected, natsConnectionHandler reconnected,
                                             natsErrHandler failed, void *closure) {
    natsOptions *options = NULL;
    natsStatus status = natsOptions_Create(&options);
    if (status == NATS_OK) status = natsOptions_SetErrorHandler(options, failed, closure);
    if (status == NATS_OK) status = natsOptions_SetDisconnectedCB(options, disconnected, closure);
    if (status == NATS_OK) status = natsOptions_SetReconnectedCB(options, reconnected, closure);
    if (status == NATS_OK) status = natsOptions_SetServers(options, servers, count);
    if (status == NATS_OK) status = natsOptions_SetName(options, name);
    if (status == NATS_OK) status = natsOptions_SetPingInterval(options, pingIntervalMillis);
    if (status == NATS_OK) status = natsOptions_SetMaxPingsOut(options, maxPingsOut);
    if (status == NATS_OK) status = natsOptions_SetMaxReconnect(options, -1);
    if (status == NATS_OK) status = natsOptions_SetReconnectWait(options, 250);
    if (status == NATS_OK) status = natsOptions_SetRetryOnFailedConnect(options, true, NULL, NULL);
    if (status == NATS_OK) status = natsConnection_Connect(connection, options);
    natsOptions_Destroy(options);
    return status;
}

/// A JetStream context whose asynchronous publishes report to `handler` with `closure`, at most `maxPending`
/// unacknowledged at a time.
static inline natsStatus canopy_js_context(jsCtx **context, natsConnection *connection, jsPubAckHandler handler,
                                           void *closure, int64_t maxPending) {
    jsOptions options;
    jsOptions_Init(&options);
    options.PublishAsync.AckHandler = handler;
    options.PublishAsync.AckHandlerClosure = closure;
    options.PublishAsync.MaxPending = maxPending;
    options.Wait = 3000;
    return natsConnection_JetStream(context, connection, &options);
}

/// Makes sure file-backed stream `name` on `subject` exists with `replicas` copies and a de-duplication window of
/// `duplicateWindowNanos`; reports its last sequence.
static inline natsStatus canopy_js_ensure_stream(jsCtx *context, const char *name, const char *subject,
                                                 int64_t replicas, int64_t duplicateWindowNanos, int32_t maxMessageSize,
                                                 uint64_t *lastSequence, jsErrCode *error) {
    jsStreamInfo *info = NULL;
    natsStatus status = js_GetStreamInfo(&info, context, name, NULL, error);
    if (status == NATS_NOT_FOUND) {
        jsStreamConfig config;
        jsStreamConfig_Init(&config);
        const char *subjects[1] = {subject};
        config.Name = name;
        config.Subjects = subjects;
        config.SubjectsLen = 1;
        config.Storage = js_FileStorage;
        config.Replicas = replicas;
        config.Duplicates = duplicateWindowNanos;
        config.MaxMsgSize = maxMessageSize;
        status = js_AddStream(&info, context, &config, NULL, error);
        if (status != NATS_OK && *error == JSStreamNameExistErr) {
            status = js_GetStreamInfo(&info, context, name, NULL, error);
        }
    }
    if (status == NATS_OK && info != NULL) *lastSequence = info->State.LastSeq;
    if (info != NULL) jsStreamInfo_Destroy(info);
    return status;
}

/// The last sequence of stream `name` now.
static inline natsStatus canopy_js_last_sequence(jsCtx *context, const char *name, uint64_t *lastSequence) {
    jsStreamInfo *info = NULL;
    jsErrCode error = 0;
    natsStatus status = js_GetStreamInfo(&info, context, name, NULL, &error);
    if (status == NATS_OK && info != NULL) *lastSequence = info->State.LastSeq;
    if (info != NULL) jsStreamInfo_Destroy(info);
    return status;
}

/// Publishes `data` to `subject` asynchronously under de-duplication id `messageID` (the context's handler gets
/// the outcome).
static inline natsStatus canopy_js_publish_async(jsCtx *context, const char *subject, const void *data, int length,
                                                 const char *messageID) {
    jsPubOptions options;
    jsPubOptions_Init(&options);
    options.MsgId = messageID;
    return js_PublishAsync(context, subject, data, length, &options);
}

/// Follows `stream` from sequence `start` (1: everything) with a push consumer of Canopy's own making: a
/// subscription to a new inbox, with `handler`, then an ephemeral consumer delivering there (one replica in memory,
/// nothing to acknowledge, flow control, a heartbeat every second while idle, removed by JetStream 5 s after its
/// subscription ends). Making it waits up to `waitMillis` for JetStream's answer, and fails when the answer names no
/// consumer. `completed` is called with `closure` once the subscription delivered its last message, whether the
/// consumer was made or not. When the subscription was made but not the consumer, it is unsubscribed here and left
/// in `subscription` for the caller to destroy, a while later (see `JetStreamLog.destroyLater`).
///
/// Not nats.c's `js_Subscribe`: nats.c 3.4.1 copies the consumer's name from JetStream's answer without checking
/// it, and crashed in `strdup(NULL)` after a partition (docs/reliability.md). Heartbeats and flow control are the
/// caller's (``canopy_js_control``).
static inline natsStatus canopy_js_follow(natsSubscription **subscription, natsConnection *connection,
                                          jsCtx *context, const char *stream, uint64_t start, int64_t waitMillis,
                                          natsMsgHandler handler, natsOnCompleteCB completed, void *closure) {
    natsInbox *inbox = NULL;
    natsStatus status = natsInbox_Create(&inbox);
    if (status != NATS_OK) {
        completed(closure);
        return status;
    }
    status = natsConnection_Subscribe(subscription, connection, inbox, handler, closure);
    if (status != NATS_OK) {
        natsInbox_Destroy(inbox);
        completed(closure);
        return status;
    }
    status = natsSubscription_SetOnCompleteCB(*subscription, completed, closure);
    if (status == NATS_OK) {
        jsOptions waiting;
        jsOptions_Init(&waiting);
        waiting.Wait = waitMillis;
        jsConsumerConfig config;
        jsConsumerConfig_Init(&config);
        config.DeliverSubject = inbox;
        config.AckPolicy = js_AckNone;
        config.MaxDeliver = 1;
        config.FlowControl = true;
        config.Heartbeat = 1000000000LL;
        config.InactiveThreshold = 5000000000LL;
        config.MemoryStorage = true;
        config.Replicas = 1;
        config.DeliverPolicy = start <= 1 ? js_DeliverAll : js_DeliverByStartSequence;
        config.OptStartSeq = start <= 1 ? 0 : start;
        jsConsumerInfo *info = NULL;
        jsErrCode error = 0;
        status = js_AddConsumer(&info, context, stream, &config, &waiting, &error);
        if (status == NATS_OK && (info == NULL || info->Name == NULL || info->Name[0] == '\0')) status = NATS_ERR;
        if (info != NULL) jsConsumerInfo_Destroy(info);
        natsInbox_Destroy(inbox);
        if (status == NATS_OK) return NATS_OK;
    } else {
        // Not set: nats.c calls nothing when this subscription ends.
        natsInbox_Destroy(inbox);
        completed(closure);
    }
    natsSubscription_Unsubscribe(*subscription);
    return status;
}

/// Whether `message` is a consumer's control message (status 100: an idle heartbeat or a flow control request),
/// answered here when it asks for an answer (flow control, or a heartbeat naming a stalled consumer). `delivered`
/// gets a heartbeat's count of the messages its consumer delivered so far (`Nats-Last-Consumer`), 0 otherwise.
static inline bool canopy_js_control(natsConnection *connection, natsMsg *message, uint64_t *delivered) {
    *delivered = 0;
    const char *status = NULL;
    if (natsMsgHeader_Get(message, "Status", &status) != NATS_OK || status == NULL || strcmp(status, "100") != 0) {
        return false;
    }
    const char *reply = natsMsg_GetReply(message);
    if (reply != NULL && reply[0] != '\0') natsConnection_Publish(connection, reply, NULL, 0);
    const char *stalled = NULL;
    if (natsMsgHeader_Get(message, "Nats-Consumer-Stalled", &stalled) == NATS_OK && stalled != NULL &&
        stalled[0] != '\0') {
        natsConnection_Publish(connection, stalled, NULL, 0);
    }
    const char *last = NULL;
    if (natsMsgHeader_Get(message, "Nats-Last-Consumer", &last) == NATS_OK && last != NULL) {
        *delivered = strtoull(last, NULL, 10);
    }
    return true;
}

/// Publishes `data` to `subject` under de-duplication id `messageID` and waits for the acknowledgement; reports the
/// message's stream sequence (the first copy's, for a duplicate).
static inline natsStatus canopy_js_publish(jsCtx *context, const char *subject, const void *data, int length,
                                           const char *messageID, uint64_t *sequence) {
    jsPubOptions options;
    jsPubOptions_Init(&options);
    options.MsgId = messageID;
    jsPubAck *ack = NULL;
    jsErrCode error = 0;
    natsStatus status = js_Publish(&ack, context, subject, data, length, &options, &error);
    if (status == NATS_OK && ack != NULL) *sequence = ack->Sequence;
    if (ack != NULL) jsPubAck_Destroy(ack);
    return status;
}

/// The message at `sequence` of `stream` (`NATS_NOT_FOUND` when there is none); destroy it with natsMsg_Destroy.
static inline natsStatus canopy_js_get(natsMsg **message, jsCtx *context, const char *stream, uint64_t sequence) {
    jsErrCode error = 0;
    return js_GetMsg(message, context, stream, sequence, NULL, &error);
}

/// The last message on `subject` in `stream` (`NATS_NOT_FOUND` when there is none, or no such stream).
static inline natsStatus canopy_js_get_last(natsMsg **message, jsCtx *context, const char *stream,
                                            const char *subject) {
    jsErrCode error = 0;
    natsStatus status = js_GetLastMsg(message, context, stream, subject, NULL, &error);
    if (status != NATS_OK && (error == JSStreamNotFoundErr || error == JSNoMessageFoundErr)) return NATS_NOT_FOUND;
    return status;
}

/// Removes every message of `stream` below sequence `below`. Nothing is below sequence 1, so nothing is asked for
/// then: a purge request with `"seq": 1` (or none) empties the whole stream (measured on nats-server 2.9.10).
static inline natsStatus canopy_js_purge_below(jsCtx *context, const char *stream, uint64_t below) {
    if (below <= 1) return NATS_OK;
    jsOptions options;
    jsOptions_Init(&options);
    options.Stream.Purge.Sequence = below;
    jsErrCode error = 0;
    return js_PurgeStream(context, stream, &options, &error);
}

/// The de-duplication id of a published message ("" when it has none).
static inline const char *canopy_msg_id(natsMsg *message) {
    const char *value = NULL;
    if (natsMsgHeader_Get(message, "Nats-Msg-Id", &value) != NATS_OK || value == NULL) return "";
    return value;
}
/// Copies `text` into `out` (`capacity` bytes, always terminated); an empty string for NULL.
static inline void canopy_copy_text(const char *text, char *out, int capacity) {
    if (capacity <= 0) return;
    snprintf(out, (size_t)capacity, "%s", text != NULL ? text : "");
}

/// The name of the server leading stream `name` now, into `leader` ("" when it has none).
static inline natsStatus canopy_js_stream_leader(jsCtx *context, const char *name, char *leader, int capacity) {
    jsStreamInfo *info = NULL;
    jsErrCode error = 0;
    natsStatus status = js_GetStreamInfo(&info, context, name, NULL, &error);
    canopy_copy_text(status == NATS_OK && info != NULL && info->Cluster != NULL ? info->Cluster->Leader : NULL,
                     leader, capacity);
    if (info != NULL) jsStreamInfo_Destroy(info);
    return status;
}

/// The name of the server holding consumer `consumer` of stream `stream` (a single-replica consumer delivers from
/// that server's copy of the stream), into `host` ("" when unknown).
static inline natsStatus canopy_js_consumer_host(jsCtx *context, const char *stream, const char *consumer,
                                                 char *host, int capacity) {
    jsConsumerInfo *info = NULL;
    jsErrCode error = 0;
    natsStatus status = js_GetConsumerInfo(&info, context, stream, consumer, NULL, &error);
    canopy_copy_text(status == NATS_OK && info != NULL && info->Cluster != NULL ? info->Cluster->Leader : NULL,
                     host, capacity);
    if (info != NULL) jsConsumerInfo_Destroy(info);
    return status;
}

/// The de-duplication id of the message at `sequence` of `stream` as the stream's leader holds it, into `id`
/// (`NATS_NOT_FOUND` when there is no message there).
static inline natsStatus canopy_js_message_id(jsCtx *context, const char *stream, uint64_t sequence, char *id,
                                              int capacity) {
    natsMsg *message = NULL;
    jsErrCode error = 0;
    natsStatus status = js_GetMsg(&message, context, stream, sequence, NULL, &error);
    if (status != NATS_OK && error == JSNoMessageFoundErr) status = NATS_NOT_FOUND;
    canopy_copy_text(status == NATS_OK && message != NULL ? canopy_msg_id(message) : NULL, id, capacity);
    if (message != NULL) natsMsg_Destroy(message);
    return status;
}

/// The stream sequence of a message a consumer delivered, the consumer's name (into `consumer`) and its own count
/// of the messages it delivered (into `consumerSequence`: one more for each, whatever the stream sequence); 0 when
/// it has no JetStream metadata.
static inline uint64_t canopy_js_delivery(natsMsg *message, char *consumer, int capacity,
                                          uint64_t *consumerSequence) {
    jsMsgMetaData *meta = NULL;
    canopy_copy_text(NULL, consumer, capacity);
    *consumerSequence = 0;
    if (natsMsg_GetMetaData(&meta, message) != NATS_OK || meta == NULL) return 0;
    uint64_t sequence = meta->Sequence.Stream;
    *consumerSequence = meta->Sequence.Consumer;
    canopy_copy_text(meta->Consumer, consumer, capacity);
    jsMsgMetaData_Destroy(meta);
    return sequence;
}
/// Asks the leader of stream `name` to step down: JetStream elects another of the stream's servers.
static inline natsStatus canopy_js_stream_stepdown(natsConnection *connection, const char *name) {
    char subject[512];
    snprintf(subject, sizeof subject, "$JS.API.STREAM.LEADER.STEPDOWN.%s", name);
    natsMsg *reply = NULL;
    natsStatus status = natsConnection_RequestString(&reply, connection, subject, "", 3000);
    if (reply != NULL) natsMsg_Destroy(reply);
    return status;
}
#endif
