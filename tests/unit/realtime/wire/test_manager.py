"""python-socketio's client manager with each client's rooms indexed
(app/realtime/wire/manager.py)."""


def test_the_indexed_manager_disconnects_a_client_from_its_own_rooms_only():
    """app/realtime/wire/manager.py: what python-socketio's manager does on a disconnect,
    without scanning every room (every refused connect is a disconnect)."""
    import socketio

    from app.realtime.wire.manager import IndexedManager

    class Server:  # what the manager asks of its server: ids for new connections
        class eio:
            ids = iter(f"sid{n}" for n in range(100))

            @classmethod
            def generate_id(cls):
                return next(cls.ids)
        packet_class = socketio.packet.Packet

    for manager in (IndexedManager(), socketio.Manager()):  # the same outcome as upstream's
        manager.set_server(Server)
        ann = manager.connect("eio-ann", "/n")
        bob = manager.connect("eio-bob", "/n")
        for room in ("topic:a", "user:ann"):
            manager.enter_room(ann, "/n", room)
        manager.enter_room(bob, "/n", "topic:a")
        assert sorted(manager.get_rooms(ann, "/n")) == sorted([ann, "topic:a", "user:ann"])
        manager.disconnect(ann, "/n")
        assert not manager.is_connected(ann, "/n")
        assert manager.get_rooms(ann, "/n") == []
        assert sorted(manager.rooms["/n"], key=str) == sorted([None, bob, "topic:a"], key=str)
        assert list(manager.get_participants("/n", "topic:a")) == [(bob, "eio-bob")]
        if isinstance(manager, IndexedManager):
            assert manager.rooms_of == {("/n", bob): {None, bob, "topic:a"}}
