/// Who a client is: to the transport that holds its connection and to the hub that routes to it.
public typealias ClientID = Int
