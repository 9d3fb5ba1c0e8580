"""Many viewers and one that stops reading: it is dropped, the others keep up."""

from __future__ import annotations

import asyncio
import socket

from broadcast_sse import WAIT, read_sse

from daemon.game import events

PAD = "x" * 16_000  # big events fill a stalled viewer's socket buffers quickly


async def _collect(server, final_seq: asyncio.Future, seen: list[int]) -> None:
    async with server.session.get(server.url + "/events") as response:
        await read_sse(response)  # the snapshot
        while True:
            message = await read_sse(response, timeout=3 * WAIT)
            seen.append(message.id)
            if final_seq.done() and message.id >= final_seq.result():
                return


async def test_a_stalled_viewer_is_dropped_and_the_others_get_every_event(live):
    server = await live(client_queue=64)
    hub = server.broadcaster.hub
    final_seq: asyncio.Future = asyncio.get_running_loop().create_future()
    seen: list[list[int]] = [[] for _ in range(6)]
    readers = [asyncio.create_task(_collect(server, final_seq, s)) for s in seen]

    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect(("127.0.0.1", server.broadcaster.port))
    stalled.sendall(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")  # and never reads

    for _ in range(int(WAIT * 100)):
        if len(hub.subscribers) == len(seen) + 1:
            break
        await asyncio.sleep(0.01)
    assert len(hub.subscribers) == len(seen) + 1

    published = 0
    while hub.dropped_viewers == 0 and published < 5000:
        server.broadcaster.publish("1", events.Notice(t=published, code="pad", message=PAD)
                                   .to_dict())  # fmt: skip
        published += 1
        await asyncio.sleep(0.002)
    print(f"stalled viewer dropped after {published} events")
    assert hub.dropped_viewers == 1, f"the stalled viewer was never dropped ({published} events)"

    final = events.GameEnd(t=9999, result="1-0", reason="arbiter").to_dict()
    server.broadcaster.publish("1", final)
    final_seq.set_result(hub.seq)
    await asyncio.wait_for(asyncio.gather(*readers), 6 * WAIT)
    stalled.close()
    for ids in seen:
        assert ids == list(range(1, hub.seq + 1)), "a healthy viewer missed events"
