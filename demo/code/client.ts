export interface Shipment {
  id: string;
  weightKg: number;
  destination: string;
}

export enum Status {
  Pending = "pending",
  Delivered = "delivered",
}

export class RoutingClient {
  constructor(private readonly baseUrl: string) {}

  async route(shipment: Shipment): Promise<string[]> {
    const res = await fetch(`${this.baseUrl}/route/${shipment.id}`);
    return (await res.json()) as string[];
  }
}

export const totalWeight = (items: Shipment[]): number =>
  items.reduce((sum, s) => sum + s.weightKg, 0);
