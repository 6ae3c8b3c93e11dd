// The design yosys synthesizes for an iCE40 FPGA in the benchmark: eight
// ALUs in a ring of registers, enough logic for every pass of synth_ice40
// (ABC9 included) to do real work.
module alu(input [15:0] a, b, input [2:0] op, output reg [15:0] y);
  always @* case (op)
    0: y = a + b; 1: y = a - b; 2: y = a & b; 3: y = a | b;
    4: y = a ^ b; 5: y = a << b[3:0]; 6: y = a >> b[3:0]; default: y = a * b;
  endcase
endmodule
module top(input clk, input [15:0] in, input [2:0] op, output [15:0] out);
  reg [15:0] r [0:7];
  wire [15:0] y [0:7];
  genvar i;
  generate for (i = 0; i < 8; i = i + 1) begin : g
    alu u(.a(i == 0 ? in : r[i-1]), .b(r[(i+3)%8]), .op(op + i[2:0]), .y(y[i]));
    always @(posedge clk) r[i] <= y[i];
  end endgenerate
  assign out = r[7];
endmodule
